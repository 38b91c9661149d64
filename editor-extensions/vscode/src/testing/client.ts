// A scripted language client: records what the provider sends, and answers each request
// when the test says so (or at once with `answer`).

export interface Sent {
  method: string;
  params: unknown;
}

interface Pending extends Sent {
  resolve(result: unknown): void;
  reject(error: unknown): void;
  token: { isCancellationRequested: boolean } | undefined;
}

export class ScriptedClient {
  running = true;
  requests: Pending[] = [];
  notifications: Sent[] = [];
  /** Answers given at once, by method (else the request waits for `reply`). */
  answer: Record<string, unknown> = {};

  isRunning(): boolean {
    return this.running;
  }

  sendRequest(method: string, params: unknown, token?: { isCancellationRequested: boolean }): Promise<unknown> {
    return new Promise((resolve, reject) => {
      this.requests.push({ method, params, resolve, reject, token });
      if (method in this.answer) {
        resolve(this.answer[method]);
      }
    });
  }

  sendNotification(method: string, params: unknown): Promise<void> {
    this.notifications.push({ method, params });
    return Promise.resolve();
  }

  /** Answer the latest request of `method`. */
  reply(method: string, result: unknown): void {
    const pending = [...this.requests].reverse().find((request) => request.method === method);
    if (!pending) {
      throw new Error(`no ${method} request to answer`);
    }
    pending.resolve(result);
  }

  sent(method: string): unknown[] {
    return this.requests.filter((request) => request.method === method).map((request) => request.params);
  }

  notified(method: string): unknown[] {
    return this.notifications.filter((note) => note.method === method).map((note) => note.params);
  }
}

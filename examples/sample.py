"""A small inventory module: the sample file `make demo` completes in."""

from dataclasses import dataclass


@dataclass
class Item:
    name: str
    price: float
    quantity: int


def total_value(items: list[Item]) -> float:
    """Return the total value of all items in stock."""
    total = 0.0
    for item in items:
        total += item.price * item.quantity
    return total


def fibonacci(n: int) -> int:
    """Return the n-th Fibonacci number."""
    


if __name__ == "__main__":
    print(fibonacci(10))

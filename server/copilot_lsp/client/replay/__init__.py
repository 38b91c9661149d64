"""The scripted editor that replays editing sessions through the server (bench replay)."""

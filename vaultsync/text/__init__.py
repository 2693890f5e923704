"""Text formats, read and written without touching a file: YAML as Obsidian reads it, markdown, decoding,
the schedule's entries."""

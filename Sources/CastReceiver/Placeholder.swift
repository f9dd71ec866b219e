// Placeholder until the target has its first file.

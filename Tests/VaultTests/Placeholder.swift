// Filled in by the module's author.

"""One module per ``normcore`` subcommand."""

from chatgate.cli.main import entry

entry()

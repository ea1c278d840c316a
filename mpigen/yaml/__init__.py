"""YAML in and out: `load` reads bytes into documents, `dump` writes objects; nothing else reads or writes YAML."""

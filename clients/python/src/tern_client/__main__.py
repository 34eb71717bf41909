"""`python -m tern_client`: the same as the `tern-client` command."""

from .cli import main

raise SystemExit(main())

"""``python -m atlas_actors.cli``: the ``atlas-actors`` command."""

from atlas_actors.cli import main

raise SystemExit(main())

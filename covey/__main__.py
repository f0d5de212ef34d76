from covey.cli import main

raise SystemExit(main())

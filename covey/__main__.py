from covey.cli.main import main

raise SystemExit(main())

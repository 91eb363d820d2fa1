from planshell.cli import main

raise SystemExit(main())

from notifier._launch import main

raise SystemExit(main())

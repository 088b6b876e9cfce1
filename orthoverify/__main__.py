import sys

from orthoverify.cli import main

sys.exit(main())

"""``python -m npu_codemod`` is the same as the ``npu-codemod`` console script."""

from npu_codemod.orchestrator.cli import main

raise SystemExit(main())

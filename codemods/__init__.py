"""The rewrite engine (the seam around Bowler), the parser, and the toolkit rules reach through
``npu_codemod.api`` (third parties) and ``npu_codemod.api._toolkit`` (the built-in
packs)."""

"""Built-in forge plugins: GitHub (REST v3) and GitLab (REST v4), behind ``npu_codemod_forge``."""

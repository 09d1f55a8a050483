"""`gradguard server`: a Language Server over stdio (pygls), for editors.

`convert` turns gradguard's results into LSP data (positions in UTF-16 code units, as LSP counts by
default); `lsp` is the server: diagnostics on open, change and save, code actions for each fix, "fix all
safe", "add `# noqa`", hover on a code, notebooks through the notebook-document protocol.
"""

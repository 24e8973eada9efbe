"""`conductor serve`: a Conductor behind an OpenAI-compatible HTTP API (docs/serve.md).

The top layer: it may import conductor/, warehouse/ and registry/; nothing imports it but the
`conductor` CLI plug-in (`server.cli:register`)."""

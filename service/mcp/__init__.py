"""The MCP server (`errkb.service.mcp`): errkb's answers as tools for coding agents, over stdio
(`errkb mcp`) and streamable HTTP (`/mcp` in `errkb serve`), on the same read side as the API."""

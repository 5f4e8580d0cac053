//! The command line as clap sees it: the four commands and the options they share.

#![allow(
    clippy::doc_markdown,
    reason = "doc comments here are clap help text, printed verbatim: backticks would show"
)]

use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, Parser, Subcommand};
use tool_core::format::Format;

use crate::approve::Approve;

const MAIN_EXAMPLES: &str = "\
Examples:
  tool list
  tool schema read_file
  tool call grep_content '{\"pattern\": \"fn main\"}'
  tool call read_file --file-path=src/main.rs --limit=20
  printf '%s\\n' '{\"name\": \"list_dir\", \"arguments\": {\"path\": \".\"}}' | tool batch

Secrets: environment variables that look like secrets (names with KEY, TOKEN,
SECRET, PASSWORD, PAT, PW, JWT, AUTH, CRED, OTP ... as a word anywhere, such as
GITHUB_TOKEN_2 or MASTER_KEY_B64; values with user:password@ in a URL) are kept
by the program but not passed to the commands of bash_command nor to stdio MCP
servers (give a server a key in the \"env\" of its .mcp.json entry). The program
is not dumpable, so a command cannot read /proc/$PPID/environ unless it runs as
root; see SECURITY.md for what a command can still read outside the sandbox.

Exit status: 0 success, 1 the tool returned an error, 2 usage error.";

const LIST_EXAMPLES: &str = "\
Examples:
  tool list                      one line per tool: name, kind, summary
  tool list --json | jq '.[].name'
  tool list --tokens             schema tokens per tool and format, and the total

--tokens counts each tool as rendered for OpenAI Chat Completions, Anthropic,
Gemini and MCP (the object that goes in the request's tool list, compact
JSON) with OpenAI's o200k_base tokenizer. Other providers' tokenizers and
prompt templates differ: use the figures to compare schemas, not as a bill.";

const SKILLS_EXAMPLES: &str = "\
Examples:
  tool --skills-dir ~/.agent/skills skills
  AGENT_TOOLS_SKILLS=~/.agent/skills:./skills tool skills --json
  tool --skills-dir skills call skill --name=pdf-forms

Layout: each skills folder holds one folder per skill, DIR/<name>/SKILL.md,
with the skill's other files beside SKILL.md. SKILL.md opens with YAML front
matter between two `---` lines: `name` (1-64 lowercase letters, digits and
hyphens, equal to the folder's name) and `description` (at most 1024
characters); the Markdown body follows. A skill that cannot be loaded is
reported on stderr with its file and line (exit status 1) and the others are
still listed.";

const PARSE_EXAMPLES: &str = "\
Examples (stdin is a model's raw answer; stdout one JSON object):
  echo '<tool_call>{\"name\": \"read_file\", \"arguments\": {\"path\": \"a.txt\"}}</tool_call>' | tool parse --format hermes
  echo '[TOOL_CALLS][{\"name\": \"add\", \"arguments\": {\"a\": 1}}]' | tool parse --format mistral
  echo '{\"name\": \"ls\", \"parameters\": {}}' | tool parse --format llama3_json
  echo \"[get_weather(city='Paris')]\" | tool parse --format pythonic
  tool schema --format json > tools.json; tool parse --format qwen3_coder --tools tools.json < answer.txt
  tool parse --format auto < answer.txt

Output: {\"content\": \"...\", \"calls\": [{\"name\", \"arguments\"}], \"notes\": [...]}:
content is the text around the calls (trimmed; empty when the answer is only
calls), arguments always a JSON object, notes non-empty when markup was
malformed or a call names a tool not in --tools. Formats: hermes, mistral,
llama3_json, pythonic, deepseek_v3, qwen3_coder, kimi_k2, granite, xlam,
glm45, auto (README, \"Models that write tool calls as text\", shows each).";

const SKILL_MD_EXAMPLES: &str = "\
Examples:
  tool skill-md                              a SKILL.md for this program (every tool, one line each)
  tool skill-md read_images                  a SKILL.md for one tool: usage and parameters
  tool skill-md --dir ~/.claude/skills grep_content glob_files
  tool --mcp-config .mcp.json skill-md --mcp github
                                             one skill for the github server's tools
";

const SCHEMA_EXAMPLES: &str = "\
Examples:
  tool schema                    every tool's canonical schema (a JSON array)
  tool schema read_file edit_file
  tool schema --format openai-strict read_file
  tool schema --format gemini --no-fallback
  tool schema --format mcp > tools.json
  tool --defer 'github__*' schema --format anthropic-tool-search-bm25

Formats: json (canonical), openai (= openai-chat), openai-strict
(= openai-chat-strict), openai-responses, openai-responses-strict, anthropic,
anthropic-strict, gemini, gemini-unroll-<levels>, gemini-json-schema, mcp,
and Anthropic's server-side tool search: anthropic-tool-search-bm25,
anthropic-tool-search-regex (each also with -strict after anthropic).
The output is the request's tool list in that format, each tool in the
strictest form it can take. Without NAMEs it is the list a new session gets:
with --defer, the deferred tools are left out and tool_search is in; with an
anthropic-tool-search format every tool is in, the deferred ones with
\"defer_loading\": true, and Anthropic's search tool comes last.
A tool that strict mode (OpenAI, Anthropic) or Gemini's `parameters` cannot
express is rendered in the looser form instead (that function without strict
mode; that declaration with `parametersJsonSchema`), reported on stderr with
the rule it breaks; the exit status stays 0. With --no-fallback such a tool is left out instead. A tool
that a format cannot express at all is reported on stderr and left out; the
exit status is then 1.";

const CALL_EXAMPLES: &str = "\
Examples:
  tool call read_file '{\"file_path\": \"README.md\"}'
  tool call read_file --file-path=README.md --limit=5      (5 is a number)
  tool call grep_content --pattern=TODO --include='*.rs'
  TRACE_ID=s1 tool call read_file --file-path=x.txt       (edits need a read first)
  TRACE_ID=s1 tool call multi_edit --edits='[{\"old_string\": \"a\", \"new_string\": \"b\"}]' --file-path=x.txt
  echo '{\"path\": \".\"}' | tool call list_dir -
  tool call read_file --help     the tool's description and parameters
  TRACE_ID=session-1 tool call --workspace ../repo --out /tmp/shots read_file --file-path=logo.png
  tool call --workspace ../repo --out /tmp/shots/logo.jpg read_file --file-path=logo.png   (a JPEG)

Tool arguments: one JSON object right after NAME (or `-` to read it from
stdin), then any number of `--key=value` (or `--key value`) pairs; a pair
overrides the same key of the object. A value that parses as JSON is used as
that JSON (`--limit=5` is a number, `--tags='[\"a\"]'` a list, `--x=true` a
boolean), anything else is a string (`--query=hello`); quote to force a string
(`--query='\"true\"'`). A bare `--flag` is `true`. Dashes in keys become
underscores (`--file-path` is `file_path`); a key no parameter has names the
one parameter spelt the same but for case, dashes and underscores
(`--case-sensitive` is also `caseSensitive`). The JSON object takes exact
names only. Everything after NAME belongs to
the tool: give this program's own options before NAME. (A lone `--help` after
NAME shows the tool's parameters, unless the tool has one called `help`.)

Output: on a terminal, the result as readable text (title, output, error,
notes, files written; terminal control characters shown escaped); otherwise
(pipes, files, scripts) one JSON object: {\"trace_id\", \"tool\", \"title\",
\"output\", \"error\", \"notes\", \"metadata\", \"long_term_memory\", \"images\",
\"attachments\"}; --json and --text force one. Output that is a
JSON object or array is embedded as JSON, not as a string. Images and inline
attachments are written to files under --out and reported by path.

--out tells a folder from a file this way: an existing folder, or a path that
ends in / or has no extension, is a folder (created when missing; files get new
names, never replacing one). A path ending in .png, .jpg, .jpeg, .gif, .webp
or .bmp (any case) is the image file: the result's first image is written to
it in that format, converted when the tool made another (JPEG has no
transparency: laid on white), the other images and files beside it; a result
with files but no image writes nothing there (give a folder). Any other
extension, or an existing file without one, is a usage error. Every file is
written to a temporary name and renamed, so it is whole or absent; a symbolic
link, folder or device at the file name is refused and left as it is.

Exit status: 0 success, 1 the tool returned an error or an image or file could
not be written (stderr names the path and why; the JSON carries the error per
image), 2 usage error (unknown tool, unparsable or invalid arguments, an --out
that is neither a folder nor an image file).";

const BATCH_EXAMPLES: &str = "\
Examples:
  printf '%s\\n' \\
    '{\"name\": \"read_file\", \"arguments\": {\"file_path\": \"a.txt\"}}' \\
    '{\"name\": \"edit_file\", \"arguments\": {\"file_path\": \"a.txt\", \"old_string\": \"x\", \"new_string\": \"y\"}}' \\
    | tool batch --workspace .
  coproc tool batch; echo '{\"name\": \"list_dir\", \"arguments\": {}}' >&\"${COPROC[1]}\"; read -r line <&\"${COPROC[0]}\"

Input: one JSON object per line, {\"name\": TOOL, \"arguments\": {...}} (arguments
may also be a string holding JSON; an \"id\" member is echoed back). Output: one
result object per input line, as `tool call` prints it, written and flushed as
soon as that call finishes. Blank lines are skipped. Every call shares one
context, so state such as the read-before-write ledger carries from line to
line. Lines are processed as they arrive; the program ends at end of input,
with status 0 unless its input or output failed (an image or file that could
not be written counts: status 1, each named on stderr). With --out FILE.png the
first result's image goes to FILE.png, the next ones' to FILE-2.png,
FILE-3.png ... (new files only: one of those names that exists is an error
for that result, never replaced), so no result overwrites an earlier one's.";

const SERVE_EXAMPLES: &str = "\
Examples:
  tool serve --workspace ~/project                 stdio, for an MCP client's config
  tool serve --http 127.0.0.1:8080                 Streamable HTTP at http://127.0.0.1:8080/mcp
  tool serve --http 0.0.0.0:8080 --allow-remote --token-file token
                                                   any client that sends the token
  tool --mcp-config .mcp.json serve                built-ins and imported tools, one server
  tool serve --http 127.0.0.1:8080 --state-file redis-url --state-prefix team-a
                                                   ledgers and loaded tools shared through
                                                   Redis/Valkey (URL in a mode-600 file)
  tool serve --skills-dir ~/.agent/skills --skills-as-prompts
                                                   skills as MCP prompts, their files as resources

Stdout carries protocol messages only: anything a tool prints goes to stderr.
Tools that need confirmation ask the client (elicitation) when it can be
asked, else --approve decides. One line on stderr says what is served.
Messages are at most 16 MiB; every request gets an answer (a JSON-RPC error
for one that is not JSON, malformed or too large). Over HTTP, sessions idle
for --idle-timeout (300 s) close, at most --max-sessions (256) are open (a
new client past it gets 503 with Retry-After), and a request's headers must
arrive within --header-timeout (10 s), its body within --body-timeout (30 s). SIGTERM, SIGINT or SIGHUP
stop the server: running calls are cancelled (bash_command kills its
command) and the program exits with status 0 within 5 seconds.";

/// The long names of the options of `tool call` itself (`workspace`,
/// `trace-id`, `timeout`, ...), for telling a misplaced one apart from a
/// tool's argument.
pub(crate) fn own_options() -> Vec<String> {
    use clap::CommandFactory;
    let command = Cli::command();
    let call = command.find_subcommand("call");
    command
        .get_arguments()
        .chain(call.into_iter().flat_map(clap::Command::get_arguments))
        .filter_map(|a| a.get_long().map(str::to_owned))
        .collect()
}

/// `tool`: run the registered tools from a shell.
#[derive(Debug, Parser)]
#[command(
    name = "tool",
    version,
    about = "List, describe and run the registered LLM-agent tools from a shell.",
    long_about = "List, describe and run the registered LLM-agent tools (the built-in coding tools \
                  and any #[tool] linked into this program) from a shell, a script or an agent \
                  that prefers a command line to function calling. Results are JSON.",
    after_help = MAIN_EXAMPLES,
    arg_required_else_help = true,
    propagate_version = true
)]
pub(crate) struct Cli {
    #[command(flatten)]
    pub(crate) common: CommonOptions,
    #[command(subcommand)]
    pub(crate) command: Command,
}

/// Options every command accepts (before the tool name, for `call`).
#[derive(Debug, Clone, Args)]
pub(crate) struct CommonOptions {
    /// Folder the built-in tools are confined to [default: the current folder].
    #[arg(long, global = true, value_name = "DIR")]
    pub(crate) workspace: Option<PathBuf>,

    /// Trace id of this run [default: $TRACE_ID, else a generated cli-xxxxxxxx]. Calls with one
    /// given trace id share session state: the file tools' read-before-write ledger is kept in
    /// $XDG_STATE_HOME/agent-tools/ledger/ (else ~/.local/state/...), per trace id and
    /// workspace, for a day.
    #[arg(long, global = true, value_name = "ID")]
    pub(crate) trace_id: Option<String>,

    /// Timeout for each call, in seconds (fractions allowed), for tools that set none themselves
    /// [default: 120].
    #[arg(long, global = true, value_name = "SECS", value_parser = parse_timeout, allow_negative_numbers = true)]
    pub(crate) timeout: Option<Duration>,

    /// How calls of tools that require a person's confirmation are answered: never approve,
    /// approve read-only tools, approve all, or ask the person at the terminal [default: ask for
    /// `call` when stdin and stderr are a terminal, else never].
    #[arg(long, global = true, value_enum, value_name = "POLICY")]
    pub(crate) approve: Option<Approve>,

    /// Allow / ask / deny patterns for bash_command, as JSON: {"default": "allow", "allow":
    /// ["git status *"], "ask": ["git push *"], "deny": ["rm -rf *"]} (every key optional,
    /// default "allow"). Each segment of a compound command (&&, ||, ;, |, &, newlines) is
    /// checked and the strictest verdict wins; command substitution, eval and sh -c need at least
    /// "ask". "ask" is answered by --approve: never (or read) refuses the command, all runs it.
    /// Without this option only the default guard applies (it refuses a few clearly destructive
    /// or remote-code forms, such as `curl … | sh`; see README's Security section).
    #[arg(long, global = true, value_name = "FILE")]
    pub(crate) bash_policy: Option<PathBuf>,

    /// JSON secret store: {"key": "value", "<url pattern>": {"key": "value"}}. Models write
    /// <secret>key</secret>; values are substituted into calls and masked in results, never
    /// printed.
    #[arg(long, global = true, value_name = "FILE")]
    pub(crate) secrets: Option<PathBuf>,

    /// URL of the page the agent is on (for URL-scoped tools and secrets), absolute with a
    /// scheme, e.g. https://shop.example.com/cart.
    #[arg(long, global = true, value_name = "URL", value_parser = parse_page_url)]
    pub(crate) page_url: Option<String>,

    /// Folder for images and other binary output [default: a folder per trace id under the
    /// system's temporary folder], or an image file. A folder: an existing one, a path ending in
    /// /, or a path without an extension (created). An image file: a name ending in .png, .jpg,
    /// .jpeg, .gif, .webp or .bmp: the first image is written to it in that format (converted if
    /// need be; a regular file there is replaced, a symlink refused), the rest beside it; `tool
    /// batch` numbers later results' files (g.png, g-2.png, g-3.png ...). Anything else is an error.
    #[arg(long, global = true, value_name = "DIR|FILE")]
    pub(crate) out: Option<PathBuf>,

    /// MCP servers whose tools join the built-ins, named <server>__<tool>: a .mcp.json file,
    /// {"mcpServers": {NAME: {"command", "args", "env"} | {"url"}}}. "disabled": true skips an entry;
    /// "includeTools" / "excludeTools" (lists of the server's tool names, * allowed) choose its tools;
    /// "protocol" its era (see --mcp-protocol); "headers" (url servers) are sent with each request,
    /// ${VAR} in a value read from this program's environment ({"Authorization": "Bearer ${TOKEN}"});
    /// a url ending in /sse speaks legacy HTTP+SSE. A server starts on the first call of one of its
    /// tools (list, schema and serve use its tool list cached in the private state folder, fetched
    /// again when the entry changes or after a day) and stops after "idleTimeout" seconds idle
    /// (default 600, 0 never); a server that fails is reported and left out.
    #[arg(long, global = true, value_name = "FILE")]
    pub(crate) mcp_config: Option<PathBuf>,

    /// The MCP protocol era for --mcp-config servers whose entry has no "protocol" key: auto
    /// (server/discover of 2026-07-28, else initialize of 2025-11-25), 2025-11-25 or 2026-07-28.
    #[arg(long, global = true, value_name = "ERA", default_value = "auto",
          value_parser = parse_mcp_protocol)]
    pub(crate) mcp_protocol: tool_mcp::ProtocolEra,

    /// Run every --mcp-config server that this program starts (`command` entries) in the kernel
    /// sandbox of bash_command, with the same --sandbox* and --allow-net options and the
    /// workspace as its writable folder; an entry's own "sandbox" key wins ("sandbox": false
    /// keeps a server out; true or {"write", "hide", "allowNet", "workspace"} sandboxes one
    /// server without this option).
    #[arg(long, global = true)]
    pub(crate) mcp_sandbox: bool,

    /// Offer only the tools whose name matches PATTERN, where * matches any run of characters
    /// (github__*, *_file); repeatable: a tool matching any of them is kept. Applies to list,
    /// schema, call, batch and serve alike.
    #[arg(long, global = true, value_name = "PATTERN")]
    pub(crate) allow_tools: Vec<String>,

    /// Leave out the tools whose name matches PATTERN (* as in --allow-tools); repeatable; wins
    /// over --allow-tools.
    #[arg(long, global = true, value_name = "PATTERN")]
    pub(crate) deny_tools: Vec<String>,

    /// Offer only the tools with this tag; repeatable: a tool with any of the tags is kept.
    #[arg(long, global = true, value_name = "TAG")]
    pub(crate) tags: Vec<String>,

    /// Defer the tools whose name matches PATTERN (* as in --allow-tools; repeatable): their
    /// names stay known but their schemas are not offered until the `tool_search` tool, added to
    /// the view, loads them for the session (the trace id; an MCP session under serve). Deferring
    /// hides schemas; it is not a permission: scope with --allow-tools / --deny-tools.
    #[arg(long, global = true, value_name = "PATTERN")]
    pub(crate) defer: Vec<String>,

    /// Keep the tools matching PATTERN loaded although a --defer pattern matches them
    /// (repeatable), e.g. `--defer '*' --keep-loaded read_file`.
    #[arg(long = "keep-loaded", global = true, value_name = "PATTERN")]
    pub(crate) keep_loaded: Vec<String>,

    /// Folder of skills (DIR/<name>/SKILL.md); repeatable [default: the folders of
    /// $AGENT_TOOLS_SKILLS, separated by `:`]. Adds the `skill` tool, whose description lists
    /// the skills, and lets read_file read the files beside them.
    #[arg(long = "skills-dir", global = true, value_name = "DIR")]
    pub(crate) skills_dirs: Vec<PathBuf>,

    /// Kernel sandbox of bash_command: workspace-write (the whole tree read-only but the
    /// workspace and a private /tmp; secrets such as ~/.ssh hidden; no network), read-only (the
    /// workspace too), or off (no sandbox; named in every result) [default: workspace-write].
    #[arg(long, global = true, value_name = "POLICY", value_parser = parse_sandbox_mode)]
    pub(crate) sandbox: Option<tool_core::SandboxMode>,

    /// Sandbox layers: full (user, mount, PID and network namespaces, Landlock, seccomp,
    /// limits), no-namespaces (Landlock, seccomp, limits), or auto (full where user namespaces
    /// work, else no-namespaces with a note) [default: auto].
    #[arg(long, global = true, value_name = "TIER", value_parser = parse_sandbox_tier)]
    pub(crate) sandbox_tier: Option<tool_core::SandboxTier>,

    /// Run with whatever sandbox layers the kernel offers (with a note naming the missing ones)
    /// instead of refusing to run commands.
    #[arg(long, global = true)]
    pub(crate) sandbox_best_effort: bool,

    /// Extra writable path in the sandbox (repeatable), e.g. ~/.cargo/registry.
    #[arg(long, global = true, value_name = "PATH")]
    pub(crate) sandbox_write: Vec<PathBuf>,

    /// Extra path hidden from sandboxed commands (repeatable), on top of the built-in secrets.
    #[arg(long, global = true, value_name = "PATH")]
    pub(crate) sandbox_hide: Vec<PathBuf>,

    /// Host a sandboxed command may reach through the sandbox's proxy, and web_fetch may fetch
    /// (repeatable; URL-pattern grammar, e.g. *.crates.io, https://docs.rs/**, or * for any
    /// public host) [default: no network].
    #[arg(long, global = true, value_name = "PATTERN")]
    pub(crate) allow_net: Vec<String>,

    /// Let --allow-net hosts be reached at loopback, private and link-local addresses (refused by
    /// default, also when a name resolves to one), e.g. a dev server on localhost:8080.
    #[arg(long, global = true)]
    pub(crate) allow_net_private: bool,

    /// Let sandboxed commands create Unix domain sockets, and so connect to any socket file
    /// they can see (a database's, an IDE's); refused by default (socketpair stays allowed).
    #[arg(long, global = true)]
    pub(crate) sandbox_allow_unix_sockets: bool,

    /// Sandbox resource limit NAME=VALUE (repeatable): processes=N, memory=SIZE,
    /// file-size=SIZE, cpu=SECONDS, open-files=N; sizes like 256MiB, times like 10s.
    #[arg(long, global = true, value_name = "NAME=VALUE")]
    pub(crate) sandbox_limit: Vec<String>,

    /// Diagnostics after edits: a language server for files with these extensions, e.g.
    /// `py,pyi=pylsp` or `ts=typescript-language-server --stdio` (repeatable; the first entry
    /// naming a file's extension serves it; arguments are split at spaces). After write_file,
    /// edit_file, multi_edit or apply_patch changes such a file, the server (started on first use,
    /// inside the bash_command sandbox unless --sandbox off, without network) gets the new text and
    /// its errors and warnings are appended to the result and its "diagnostics" metadata. A
    /// missing, hung or crashing server gives a note; the write stands [default: off].
    #[arg(long, global = true, value_name = "EXTS=COMMAND", value_parser = parse_lsp)]
    pub(crate) lsp: Vec<tool_builtins::diagnostics::LspServer>,

    /// How long a write waits for the --lsp server's diagnostics of the new text, in seconds
    /// (fractions allowed, at most 60); it stops waiting as soon as they arrive [default: 2].
    #[arg(long, global = true, value_name = "SECS", value_parser = parse_lsp_wait)]
    pub(crate) lsp_wait: Option<Duration>,

    /// Diagnostics after edits from a JSON file: {"servers": [{"extensions": ["py"], "command":
    /// ["pylsp"]}], "checks": [{"extensions": ["sh"], "check": ["sh", "-n", "{file}"],
    /// "timeout_secs": 10}], "wait_secs": 2}. Servers as --lsp (--lsp entries come first); a check
    /// command runs on a changed file no server serves, inside the sandbox, and its
    /// `FILE:LINE[:COL]: MESSAGE` lines are appended like a server's diagnostics [default: none]
    #[arg(long, global = true, value_name = "FILE")]
    pub(crate) lsp_config: Option<PathBuf>,
    /// Files holding secrets of a subcommand's own options (`serve
    /// --token-file`), hidden from sandboxed commands like
    /// [`CommonOptions::secret_files`]; set by the command, not a flag.
    #[arg(skip)]
    pub(crate) command_secret_files: Vec<PathBuf>,
}

/// `--mcp-protocol`: `auto`, `2025-11-25` or `2026-07-28`.
fn parse_mcp_protocol(s: &str) -> Result<tool_mcp::ProtocolEra, String> {
    s.parse()
        .map_err(|e: tool_mcp::Error| e.message().to_owned())
}

/// `--lsp`: `EXT[,EXT...]=COMMAND [ARG...]`.
fn parse_lsp(s: &str) -> Result<tool_builtins::diagnostics::LspServer, String> {
    s.parse()
        .map_err(|e: tool_builtins::diagnostics::LspConfigError| e.to_string())
}

/// `--lsp-wait`: seconds, more than 0 and at most 60 (a longer wait would
/// hold every write that long when a server never answers).
fn parse_lsp_wait(text: &str) -> Result<Duration, String> {
    let wait = parse_timeout(text)?;
    if wait > Duration::from_secs(60) {
        return Err(format!(
            "`{text}` seconds is longer than the 60 s --lsp-wait allows"
        ));
    }
    Ok(wait)
}

fn parse_sandbox_mode(s: &str) -> Result<tool_core::SandboxMode, String> {
    s.parse()
        .map_err(|e: tool_core::SandboxPolicyError| e.to_string())
}

fn parse_sandbox_tier(s: &str) -> Result<tool_core::SandboxTier, String> {
    s.parse()
        .map_err(|e: tool_core::SandboxPolicyError| e.to_string())
}

/// The environment variable naming skills folders when no `--skills-dir` is
/// given: folders separated as in `PATH` (`:` on Unix).
pub(crate) const SKILLS_ENV: &str = "AGENT_TOOLS_SKILLS";

impl CommonOptions {
    /// The configured skills folders: every `--skills-dir`, else the folders of
    /// [`SKILLS_ENV`] (empty entries skipped), else none. Each is made absolute
    /// against the current folder here, once, so the skill loader, the file
    /// tools' refusals and the sandbox's read-only list see one path (review 23,
    /// F1: the sandbox resolved a relative folder against the workspace).
    pub(crate) fn skills_folders(&self) -> Vec<PathBuf> {
        let given: Vec<PathBuf> = if self.skills_dirs.is_empty() {
            std::env::var_os(SKILLS_ENV)
                .map(|v| {
                    std::env::split_paths(&v)
                        .filter(|p| !p.as_os_str().is_empty())
                        .collect()
                })
                .unwrap_or_default()
        } else {
            self.skills_dirs.clone()
        };
        given
            .into_iter()
            .map(|p| std::path::absolute(&p).unwrap_or(p))
            .collect()
    }

    /// The files this program reads secrets from, made absolute against the
    /// current folder: `--secrets` (the secret store), `--mcp-config` (its
    /// servers' `env` and `headers`) and [`Self::command_secret_files`]
    /// (`serve --token-file`). The sandbox hides each one from commands in
    /// both tiers (breakout review E4: `rev` of the secret store printed
    /// every value, and masking did not catch it), whatever
    /// `--sandbox-hide` says. A file that does not exist is skipped by the
    /// sandbox (its option fails first).
    pub(crate) fn secret_files(&self) -> Vec<PathBuf> {
        self.secrets
            .iter()
            .chain(&self.mcp_config)
            .chain(&self.command_secret_files)
            .map(|p| std::path::absolute(p).unwrap_or_else(|_| p.clone()))
            .collect()
    }

    /// The sandbox policy of these options: skills folders read-only, and
    /// [`Self::secret_files`] and `--sandbox-hide` paths hidden.
    ///
    /// # Errors
    /// A bad `--sandbox-limit` or `--allow-net` value, with what is accepted.
    pub(crate) fn sandbox_policy(&self) -> Result<tool_core::SandboxPolicy, String> {
        let mut policy = tool_core::SandboxPolicy::default()
            .with_mode(self.sandbox.unwrap_or_default())
            .with_tier(self.sandbox_tier.unwrap_or_default())
            .with_best_effort(self.sandbox_best_effort)
            .with_unix_sockets(self.sandbox_allow_unix_sockets);
        for p in &self.sandbox_write {
            policy = policy.writable(p);
        }
        for p in &self.sandbox_hide {
            policy = policy.hidden(p);
        }
        for p in self.secret_files() {
            policy = policy.hidden(p);
        }
        for p in self.skills_folders() {
            policy = policy.read_only(p);
        }
        for l in &self.sandbox_limit {
            policy
                .limits
                .set(l)
                .map_err(|e| format!("--sandbox-limit: {e}"))?;
        }
        let mut network = tool_core::NetworkPolicy::deny_all();
        for pattern in &self.allow_net {
            let parsed = tool_core::UrlPattern::parse(pattern)
                .map_err(|e| format!("--allow-net {pattern}: {e}"))?;
            network = network.allow(parsed);
        }
        Ok(policy.with_network(network.allow_private(self.allow_net_private)))
    }
}

/// The commands.
#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// List the registered tools: name, kind and one-line summary.
    #[command(after_help = LIST_EXAMPLES)]
    List {
        /// Print every tool's full spec as a JSON array instead (with --tokens: the counts).
        #[arg(long)]
        json: bool,

        /// Show each tool's schema tokens per format (openai, anthropic, gemini, mcp; o200k_base)
        /// and a total row.
        #[arg(long)]
        tokens: bool,
    },

    /// List the skills of --skills-dir / $AGENT_TOOLS_SKILLS: name, description, path.
    #[command(after_help = SKILLS_EXAMPLES)]
    Skills {
        /// Print a JSON array of {"name", "description", "path"} instead.
        #[arg(long)]
        json: bool,
    },

    /// Print a SKILL.md (Agent Skills format) for this program, for named tools, or for the
    /// tools of an imported MCP server (--mcp SERVER).
    #[command(name = "skill-md", after_help = SKILL_MD_EXAMPLES)]
    SkillMd {
        /// Tools to write a skill for, one skill each [default: one skill for the program].
        #[arg(value_name = "NAME")]
        names: Vec<String>,

        /// Write DIR/<skill>/SKILL.md for each skill instead of printing (needed for more
        /// than one NAME); an existing SKILL.md there is replaced.
        #[arg(long, value_name = "DIR")]
        dir: Option<PathBuf>,

        /// One skill for the tools of this --mcp-config server, to be called by name from an
        /// agent whose host defers their schemas (e.g. --defer 'SERVER__*').
        #[arg(long, value_name = "SERVER", conflicts_with = "names")]
        mcp: Option<String>,
    },

    /// Print tool schemas (all tools, or the named ones in the order given) as a JSON array.
    #[command(after_help = SCHEMA_EXAMPLES)]
    Schema {
        /// Tools to describe [default: all].
        #[arg(value_name = "NAME")]
        names: Vec<String>,

        /// Schema rendering: json, openai, openai-strict, anthropic, anthropic-strict, gemini,
        /// mcp, anthropic-tool-search-bm25, ... (the list is below).
        #[arg(long, value_name = "FORMAT", default_value = "json", value_parser = parse_format)]
        format: Format,

        /// Leave out (and report, exit status 1) a tool that cannot take the format's strictest
        /// form, instead of rendering it without strict mode / with parametersJsonSchema.
        #[arg(long)]
        no_fallback: bool,
    },

    /// Read a model's raw answer on stdin and print the tool calls written in it as text.
    #[command(after_help = PARSE_EXAMPLES)]
    Parse {
        /// The markup to read: hermes, mistral, llama3_json, pythonic, deepseek_v3, qwen3_coder,
        /// kimi_k2, granite, xlam, glm45, or auto (detect).
        #[arg(long, value_name = "NAME")]
        format: String,

        /// A JSON array of tool schemas ({"name", "description", "parameters"}, as `tool schema`
        /// prints them) to check call names against and coerce argument types with.
        #[arg(long, value_name = "FILE")]
        tools: Option<std::path::PathBuf>,
    },

    /// Call one tool and print its result: readable text on a terminal, one JSON object otherwise.
    #[command(
        after_help = CALL_EXAMPLES,
        override_usage = "tool call [OPTIONS] <NAME> [ARGS_JSON | -] [--key=value ...]"
    )]
    Call {
        /// Print the result indented over several lines (JSON).
        #[arg(long)]
        pretty: bool,

        /// Print the result as one JSON object even when stdout is a terminal (the default
        /// when it is not: pipes, files, scripts).
        #[arg(long, conflicts_with = "text")]
        json: bool,

        /// Print the result as readable text (title, output, error, notes, files) even when
        /// stdout is not a terminal (the default when it is).
        #[arg(long, conflicts_with = "pretty")]
        text: bool,

        /// The tool to call, then its arguments: an optional JSON object (or `-` for stdin),
        /// then `--key=value` pairs.
        // One positional for both, so that clap treats every word after the
        // name as the tool's even when it looks like one of this program's options.
        #[arg(
            value_name = "NAME",
            required = true,
            num_args = 1..,
            trailing_var_arg = true,
            allow_hyphen_values = true
        )]
        words: Vec<String>,
    },

    /// Run JSON Lines calls from stdin in one shared context, one result line per call.
    #[command(after_help = BATCH_EXAMPLES)]
    Batch,

    /// Serve the tools as a Model Context Protocol server (stdio, or Streamable HTTP at /mcp).
    #[command(after_help = SERVE_EXAMPLES)]
    Serve {
        /// Serve Streamable HTTP on this address (path /mcp) instead of stdio. A loopback
        /// address (127.0.0.1:PORT, [::1]:PORT); Host and Origin headers must then be loopback
        /// names. Any other address needs --allow-remote and a token.
        #[arg(long, value_name = "ADDR")]
        http: Option<std::net::SocketAddr>,

        /// Let clients on other machines in: --http may then be any address (0.0.0.0:PORT,
        /// [::]:PORT), every request needs "Authorization: Bearer TOKEN" (--token-file or
        /// --token), and the Host header is not checked (the token is the protection; browser
        /// Origins must still be loopback ones). Anyone with the token can run every tool
        /// served, bash_command included: a shell on this machine.
        #[arg(long, requires = "http")]
        allow_remote: bool,

        /// File holding the bearer token clients must send (the first line, at least 16
        /// characters; e.g. `(umask 077; openssl rand -hex 32 > token)`; mode 600: a file others may read is refused). Works on a loopback --http too.
        #[arg(long, value_name = "FILE", requires = "http", conflicts_with = "token")]
        token_file: Option<PathBuf>,

        /// The bearer token itself. Other local users see it in the process list and commands
        /// run by bash_command can read it from /proc: prefer --token-file.
        #[arg(long, value_name = "TOKEN", requires = "http")]
        token: Option<String>,

        /// Tools per tools/list page.
        #[arg(long, value_name = "N", default_value_t = tool_mcp::DEFAULT_PAGE_SIZE)]
        page_size: usize,

        #[command(flatten)]
        limits: HttpLimitOptions,

        /// Build no search index: grep_content and glob_files scan on every call. By default a
        /// gram signature index of the workspace is built in the background at start (not below 16
        /// MiB of files) and kept fresh by watching the folder; see `tool index --help`.
        #[arg(long)]
        no_index: bool,

        /// Keep per-trace state (the read-before-write ledger of every client trace, loaded
        /// tools, task lists, background job records) in this shared store instead of
        /// $XDG_STATE_HOME/agent-tools: redis://[USER:PASSWORD@]HOST[:PORT][/DB] (Redis 7 or
        /// Valkey; rediss:// for TLS). Needs a `tool` built with feature `redis`. At start the
        /// server must take a write and a read under --state-prefix with the URL's user; later,
        /// calls that change state fail while it is unreachable (nothing is kept in a file
        /// instead). Jobs run on the replica that starts them and are mirrored here, so every
        /// replica lists, reads and stops them. The URL's user part is never printed, but a URL
        /// given here is in the process list: prefer --state-file.
        #[arg(long, value_name = "URL", group = "state_store")]
        state: Option<String>,

        /// File holding the --state URL on its first line (at most 4 KiB), so the password is
        /// not in the process list. The file must be a regular file readable by its owner only
        /// (chmod 600): one readable by group or others is refused. Hidden from sandboxed
        /// commands like --token-file.
        #[arg(long, value_name = "FILE", group = "state_store")]
        state_file: Option<PathBuf>,

        /// The key prefix in the --state store (default agent-tools): one per deployment
        /// sharing a server. ASCII letters, digits, `-`, `_`, `.`; at most 64 bytes.
        #[arg(long, value_name = "PREFIX", requires = "state_store")]
        state_prefix: Option<String>,

        /// The most live keys this deployment keeps under its prefix in the --state store
        /// (default 100000; 0: no cap). Each client trace makes a few (its ledger, task list,
        /// jobs, loaded tools), each living one day after its last write; a call that would make
        /// one more is refused, saying so, while existing traces go on. Bounds what clients
        /// sending a fresh trace id per call can make a shared server hold.
        #[arg(long, value_name = "N", requires = "state_store")]
        state_max_keys: Option<u64>,

        /// Also offer each skill of --skills-dir / $AGENT_TOOLS_SKILLS as an MCP prompt (its
        /// name and description; prompts/get gives its SKILL.md body, with an optional `task`
        /// argument appended) and the files beside it as resources skill://NAME/PATH (at most
        /// 50 per skill, each read up to 1 MiB, only from inside the skill's folder).
        #[arg(long)]
        skills_as_prompts: bool,

        /// A served tool with task support whose first input (a form, a question, a
        /// confirmation) is asked before its task is created. Affects only calls from
        /// 2026-07-28 clients that declare the tasks extension, and only tools with task support
        /// (#[tool(task_support = ...)], ToolSpec::with_task_support): the call answers with
        /// input-required results until the tool's first ask has every answer, then with the
        /// task (or the result, when the tool ended first). Without it, the task is created at
        /// once and waits for the input in input_required (tasks/get shows the request,
        /// tasks/update answers it). 2025-11-25 sessions are unaffected. A name that is not a
        /// served tool with task support is not affected (a warning at start says so); when no
        /// served tool has task support the flag does nothing. Repeat for several tools.
        #[arg(long, value_name = "TOOL")]
        input_before_task: Vec<String>,
    },

    /// The search index `tool serve` keeps for the workspace: status, build now, drop.
    #[command(after_help = INDEX_EXAMPLES)]
    Index {
        #[command(subcommand)]
        action: IndexAction,
    },

    /// OAuth for the `url` servers of --mcp-config: log in (cache a token), log out.
    #[command(after_help = MCP_EXAMPLES)]
    Mcp {
        #[command(subcommand)]
        action: McpAction,
    },
}

/// What `tool mcp` does.
#[derive(Debug, Clone, Subcommand)]
pub(crate) enum McpAction {
    /// Authorize this program at the server's authorization server (OAuth 2.1, browser-free:
    /// the URL to open is printed; the answer comes back to a listener on 127.0.0.1) and
    /// cache the token.
    Login {
        /// The server's key in --mcp-config's mcpServers.
        name: String,
    },
    /// Delete the server's cached token.
    Logout {
        /// The server's key in --mcp-config's mcpServers.
        name: String,
    },
}

const MCP_EXAMPLES: &str = "\
Examples:
  tool --mcp-config .mcp.json mcp login github    print the URL to open, wait, cache the token
  tool --mcp-config .mcp.json mcp logout github   forget the token

Tokens are cached per server URL in the private state folder
($XDG_STATE_HOME/agent-tools/mcp-oauth/, files mode 0600, hidden from the sandbox) and
refreshed when they expire; every later run uses them. An entry's \"oauth\" object sets a
pre-registered client_id / client_secret (${VAR} allowed), scopes, or the
client_credentials grant.";

/// What `tool index` does.
#[derive(Debug, Clone, Copy, Subcommand)]
pub(crate) enum IndexAction {
    /// Show the stored index of the workspace (files, size, location) without building.
    Status,
    /// Build (or bring up to date) the stored index now, and print what was built.
    Build,
    /// Delete the stored index of the workspace.
    Drop,
}

const INDEX_EXAMPLES: &str = "\
Examples:
  tool --workspace ~/project index build    build or refresh the stored index now
  tool --workspace ~/project index status   what is stored, and where
  tool --workspace ~/project index drop     delete it (searches scan until serve builds it again)

The index lives in the private state folder ($XDG_STATE_HOME/agent-tools/index/), keyed by the
workspace, never inside it. `tool serve` reuses a stored index whose files are unchanged.";

/// `tool serve --http`'s session, header and body limits ([`tool_mcp::HttpLimits`]).
#[derive(Debug, Clone, Args)]
pub(crate) struct HttpLimitOptions {
    /// With --http: close a session after this many seconds without a message (its client then
    /// gets 404 and starts a new one).
    #[arg(long, value_name = "SECS", requires = "http", value_parser = parse_timeout,
          default_value = "300")]
    pub(crate) idle_timeout: Duration,

    /// With --http: open sessions at most; a new client past it gets 503 with Retry-After.
    #[arg(long, value_name = "N", requires = "http",
          default_value_t = tool_mcp::DEFAULT_MAX_SESSIONS)]
    pub(crate) max_sessions: usize,

    /// With --http: seconds a client has to send a request's line and headers before the
    /// connection is closed.
    #[arg(long, value_name = "SECS", requires = "http", value_parser = parse_timeout,
          default_value = "10")]
    pub(crate) header_timeout: Duration,

    /// With --http: seconds a client has to send a POST body after its headers (408 after).
    #[arg(long, value_name = "SECS", requires = "http", value_parser = parse_timeout,
          default_value = "30")]
    pub(crate) body_timeout: Duration,
}

impl HttpLimitOptions {
    /// The limits these options ask for.
    pub(crate) fn limits(&self) -> tool_mcp::HttpLimits {
        tool_mcp::HttpLimits::default()
            .with_idle_timeout(self.idle_timeout)
            .with_max_sessions(self.max_sessions)
            .with_header_timeout(self.header_timeout)
            .with_body_timeout(self.body_timeout)
    }
}

/// `--format`: tool-core's format names, plus `openai` and `openai-strict`
/// for the Chat Completions renderings (the names the issue and most users use).
fn parse_format(text: &str) -> Result<Format, String> {
    match text {
        "openai" => Ok(Format::OpenAiChat { strict: false }),
        "openai-strict" => Ok(Format::OpenAiChat { strict: true }),
        other => other.parse::<Format>().map_err(|e| e.to_string()),
    }
}

/// `--timeout`: positive, finite seconds; fractions allowed.
fn parse_timeout(text: &str) -> Result<Duration, String> {
    let secs: f64 = text
        .trim()
        .parse()
        .map_err(|_| format!("`{text}` is not a number of seconds (e.g. 30 or 2.5)"))?;
    if !secs.is_finite() || secs <= 0.0 {
        return Err(format!(
            "the timeout must be more than 0 seconds, got `{text}`"
        ));
    }
    Duration::try_from_secs_f64(secs).map_err(|_| format!("`{text}` seconds is too long"))
}

/// `--page-url`: an absolute URL (at most 16 KiB, the longest URL a pattern
/// is matched against), kept as written.
fn parse_page_url(text: &str) -> Result<String, String> {
    if text.len() > 16 * 1024 {
        return Err("the URL is longer than 16 KiB".to_owned());
    }
    match url::Url::parse(text) {
        Ok(u) if u.cannot_be_a_base() && u.scheme() != "data" => Err(format!(
            "`{text}` is not a page URL: write it with its scheme and host, e.g. https://example.com/page"
        )),
        Ok(_) => Ok(text.to_owned()),
        Err(e) => Err(format!(
            "`{text}` is not a URL ({e}): write it with its scheme and host, e.g. https://example.com/page"
        )),
    }
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    use super::*;

    #[test]
    fn clap_definition_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn format_names() {
        assert_eq!(
            parse_format("openai"),
            Ok(Format::OpenAiChat { strict: false })
        );
        assert_eq!(
            parse_format("openai-strict"),
            Ok(Format::OpenAiChat { strict: true })
        );
        assert_eq!(parse_format("mcp"), Ok(Format::Mcp));
        assert_eq!(parse_format("json"), Ok(Format::Json));
        assert!(
            parse_format("yaml")
                .unwrap_err()
                .contains("gemini-json-schema")
        );
    }

    #[test]
    fn input_before_task_names_tools_and_repeats() {
        let cli = Cli::try_parse_from([
            "tool",
            "serve",
            "--input-before-task",
            "deploy",
            "--input-before-task",
            "migrate",
        ])
        .expect("parses");
        let Command::Serve {
            input_before_task, ..
        } = cli.command
        else {
            panic!("not serve");
        };
        assert_eq!(input_before_task, ["deploy", "migrate"]);
    }

    #[test]
    fn http_limit_defaults_are_tool_mcps() {
        let cli = Cli::try_parse_from(["tool", "serve", "--http", "127.0.0.1:0"]).expect("parses");
        let Command::Serve { limits, .. } = cli.command else {
            panic!("not serve");
        };
        assert_eq!(limits.limits(), tool_mcp::HttpLimits::default());
        let cli = Cli::try_parse_from([
            "tool",
            "serve",
            "--http",
            "127.0.0.1:0",
            "--idle-timeout",
            "1.5",
            "--max-sessions",
            "3",
            "--header-timeout",
            "2",
            "--body-timeout",
            "4",
        ])
        .expect("parses");
        let Command::Serve { limits, .. } = cli.command else {
            panic!("not serve");
        };
        let limits = limits.limits();
        assert_eq!(limits.idle_timeout, Duration::from_millis(1500));
        assert_eq!(limits.max_sessions, 3);
        assert_eq!(limits.header_timeout, Duration::from_secs(2));
        assert_eq!(limits.body_timeout, Duration::from_secs(4));
        // They belong to --http.
        assert!(Cli::try_parse_from(["tool", "serve", "--max-sessions", "3"]).is_err());
    }

    #[test]
    fn timeout_accepts_positive_seconds_only() {
        assert_eq!(parse_timeout("2.5"), Ok(Duration::from_millis(2500)));
        assert!(parse_timeout("0").is_err());
        assert!(parse_timeout("-1").is_err());
        assert!(parse_timeout("nan").is_err());
        assert!(parse_timeout("inf").is_err());
        assert!(parse_timeout("1e300").is_err());
        assert!(parse_timeout("soon").is_err());
    }

    /// Breakout review E4: the files `tool` reads secrets from are hidden
    /// from sandboxed commands, made absolute, on top of `--sandbox-hide`.
    #[test]
    fn the_files_holding_the_programs_secrets_are_hidden() {
        let cli = Cli::try_parse_from([
            "tool",
            "--secrets",
            "/cfg/secrets.json",
            "--mcp-config",
            "rel/mcp.json",
            "--sandbox-hide",
            "/other",
            "list",
        ])
        .unwrap();
        let mut common = cli.common;
        common
            .command_secret_files
            .push(PathBuf::from("/cfg/token"));
        let hidden = common.sandbox_policy().unwrap().hidden;
        let here = std::env::current_dir().unwrap();
        assert_eq!(
            hidden,
            [
                PathBuf::from("/other"),
                PathBuf::from("/cfg/secrets.json"),
                here.join("rel/mcp.json"),
                PathBuf::from("/cfg/token"),
            ]
        );
    }

    #[test]
    fn everything_after_the_tool_name_goes_to_the_tool() {
        let cli = Cli::try_parse_from([
            "tool",
            "--workspace",
            "/w",
            "call",
            "bash_command",
            "--timeout=5",
            "--workspace",
            "x",
        ])
        .unwrap();
        assert_eq!(cli.common.workspace, Some(PathBuf::from("/w")));
        assert_eq!(cli.common.timeout, None);
        match cli.command {
            Command::Call { words, .. } => {
                assert_eq!(words, ["bash_command", "--timeout=5", "--workspace", "x"]);
            }
            other => panic!("parsed as {other:?}"),
        }
    }

    #[test]
    fn common_options_go_before_or_after_the_command() {
        let cli =
            Cli::try_parse_from(["tool", "call", "--trace-id", "t1", "--approve", "read", "x"])
                .unwrap();
        assert_eq!(cli.common.trace_id.as_deref(), Some("t1"));
        assert_eq!(cli.common.approve, Some(Approve::Read));
    }
}

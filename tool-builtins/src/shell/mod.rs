//! The shell wing: `bash_command` ([`bash`]) and what it stands on.
//!
//! - [`config`]: [`BashConfig`], the limits and defaults;
//! - [`env`](mod@env): which environment variables are withheld as secrets;
//! - `run`: starting, watching, capturing and stopping one command;
//! - [`policy`]: [`CommandPolicy`](policy::CommandPolicy) and the command splitter;
//! - [`guard`]: the default refusals;
//! - `proctree` and `ansi`: the process tree below the per-call supervisor,
//!   and terminal-escape stripping.
//!
//! # `bash_command`
//!
//! The command runs as `bash -c COMMAND` (`sh -c` where bash is missing) in a
//! process group of its own, with standard input from `/dev/null` so nothing
//! waits for a keyboard. Standard output and standard error share one pipe,
//! so the model reads them interleaved exactly as they were written.
//!
//! Hazards handled:
//! - **Unbounded output**: bytes stream through [`HeadTail`](tool_core::truncate::HeadTail): the head and the
//!   tail are kept in memory, everything is written to a spill file whose path
//!   the output names, so memory stays bounded whatever the command prints.
//!   The spill file lies in the folder of the context's trace id, inside a
//!   per-user `0700` folder (see `tool_core::truncate`), where `read_file` and
//!   `grep_content` of the same trace can read it.
//!   The spill file is capped too (`Truncation::max_spill_bytes`, 32 MiB by
//!   default: the beginning is kept and the output says the file was cut), so
//!   `yes` cannot fill the disk.
//! - **Processes outliving the call**: the shell runs under a per-call
//!   supervisor: a fork of this process that marks itself a child subreaper
//!   (`PR_SET_CHILD_SUBREAPER`), starts the shell (with `PR_SET_PDEATHSIG`)
//!   and reaps it; so every process the command starts stays below it
//!   however it detaches (`&`, `nohup`, `setsid`, `disown`, double forks,
//!   `set -m` jobs), and the tree is found from `/proc`. The crate's private
//!   `proctree` module documents the design. Every
//!   process a call started ends with the call: on success, timeout,
//!   cancellation, and when the call's future is dropped; and when this
//!   process dies, even by `SIGKILL`, the supervisor sees its control pipe
//!   close and kills the tree.
//! - **Background children**: the call completes when the shell exits plus a
//!   short drain deadline ([`BashConfig::drain`]) for output still on its way;
//!   then whatever is still running gets `SIGTERM`, and `SIGKILL` after
//!   [`BashConfig::kill_grace`]; the output says so and the metadata carries
//!   `stopped_background: true`. A background job cannot keep the call open,
//!   nor outlive it.
//! - **Timeouts**: every process below the supervisor, and every process
//!   group they are in (job control, `set -m`, gives each job its own), gets
//!   `SIGTERM`, then `SIGKILL` after [`BashConfig::kill_grace`]. The process
//!   tree is read from `/proc`, frozen while it is read, and re-read until
//!   nothing is left. Cancellation through the context does the same, and so
//!   does dropping the call half-way.
//! - **Terminal escapes**: colours, cursor moves and OSC strings are removed,
//!   with the parser's state carried across reads.
//! - **Secrets**: environment variables that look like secrets (secret words
//!   as name segments anywhere, `GITHUB_TOKEN_2`, `MASTER_KEY_B64`; values
//!   with credentials, `scheme://user:pass@host`: the rule of
//!   [`tool_core::governance::secret_env`], plus
//!   [`BashConfig::secret_env_patterns`]) are not passed on, and their values
//!   (8 characters or more) are masked as `<withheld:NAME>` wherever the
//!   command prints them. Secret values of the context's `SecretStore` that the
//!   command prints are masked back to their `<secret>key</secret>`
//!   placeholders as the output streams in ([`StreamMasker`](tool_core::truncate::StreamMasker), also when a
//!   value is split across two reads), before anything is kept or written to
//!   the spill file.
//! - **Dangerous commands**: with a [`CommandPolicy`](policy::CommandPolicy) in [`BashConfig::policy`],
//!   every segment of the command is checked first; denied commands are
//!   refused, and those needing confirmation go to the context's approver.
//!
//! A non-zero exit status is not a tool error, and neither is the command's
//! own timeout: the output says what happened and the metadata carries
//! `exit_code`, `timed_out`, `truncated` and `output_path`.

pub mod bash;
pub mod config;
pub mod env;
pub mod guard;
pub mod job_tools;
pub mod policy;

pub(crate) mod ansi;
mod background;
mod proctree;
pub(crate) mod run;
pub mod split;
mod wildcard;

pub use bash::bash_command;
pub use config::{
    BASH_MAX_OUTPUT_BYTES, BASH_MAX_OUTPUT_LINES, BashConfig, DEFAULT_BASH_TIMEOUT,
    DEFAULT_SECRET_ENV_PATTERNS, MAX_BASH_GRACE, MAX_BASH_TIMEOUT,
};
pub use env::{is_secret_env, is_secret_env_name};
pub use job_tools::{job_kill, job_list, job_output};

//! Secrets in the environment: what the program's children see, and what
//! they can read of the program itself.
//!
//! The program keeps its own environment (`../shared/design/cross-cutting.md`
//! §7), so keys it is configured to use still resolve. What it starts does
//! not get the secret-looking variables: `bash_command` starts each command
//! from [`tool_core::governance::secret_env::scrub_env`]'s result (and the
//! host's own `BashConfig::secret_env_patterns`), and `tool-mcp` starts each
//! stdio MCP server the same way, adding only the variables its `.mcp.json`
//! entry's `"env"` passes on purpose. The rule (secret words as name
//! segments anywhere, `GITHUB_TOKEN_2`, `MASTER_KEY_B64`, `OTP_SEED`; and
//! credentials in values, `scheme://user:pass@host` in any variable) is that
//! module's.
//!
//! A command could still read the variables from the program's own
//! environment block, `/proc/<pid of tool>/environ` (and from the blocks of
//! the processes that started `tool`, see below). So, first thing in `main`,
//! the program marks itself not dumpable (`prctl(PR_SET_DUMPABLE, 0)`, as
//! `ssh-agent` does): the kernel then lets only a process with
//! `CAP_SYS_PTRACE` read its `/proc/<pid>/environ` or `mem` or attach to it.
//! The mark is inherited by the per-call supervisor (a fork), and reset by
//! `exec`, so the commands themselves are ordinary processes. Side effects:
//! the program writes no core dump, and a debugger must run as root.
//!
//! Not covered while commands run outside the sandbox (`--sandbox off`):
//! - a command running as root (or with `CAP_SYS_PTRACE`) reads any
//!   process's environment;
//! - the processes that started `tool` (the user's shell, an editor, an
//!   agent host) are ordinary processes of the same user: a command reads
//!   their `/proc/<ancestor>/environ`, which holds the variables `tool` was
//!   started with. The sandbox's PID namespace hides them; until a command
//!   runs in it, start `tool` from an environment without secrets
//!   (`env -u GITHUB_TOKEN tool …`) where that matters.

use std::io::Write;

/// Marks this process not dumpable, so that processes of the same user
/// without `CAP_SYS_PTRACE` cannot read its `/proc/<pid>/environ` (the
/// module docs say what this covers). A failure is said on stderr and the
/// program goes on.
pub(crate) fn protect_environment() {
    if let Err(e) =
        rustix::process::set_dumpable_behavior(rustix::process::DumpableBehavior::NotDumpable)
    {
        let _ = writeln!(
            std::io::stderr(),
            "warning: could not mark the program not dumpable ({e}); commands run by \
             bash_command may read its environment from /proc"
        );
    }
}

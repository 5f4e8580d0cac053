//! The `tool` program; everything lives in the `tool_cli` library.

fn main() -> std::process::ExitCode {
    tool_cli::main()
}

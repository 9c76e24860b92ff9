//! `scanc`: the scan compiler on the command line, the third door onto the front end of
//! `scan!` and of build scripts (`scan_codegen::Builder`).
//!
//! Exit status: 0 when the file compiles; 1 when it has errors (printed on stderr as
//! `file:line:column: error: message`, the source line and carets, every error at once);
//! 2 when the command could not do its work: a usage error (clap's), or a FILE that cannot
//! be read (missing, unreadable, not UTF-8) or output that cannot be written.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand, ValueEnum};
use scan_codegen::{Builder, Errors};

const AFTER_HELP: &str = "\
FILE holds exactly what the body of a `scan! { }` block holds: an optional
`#![rewrites(..)]`, then one or more `fn`s.

Exit status: 0 when FILE compiles, 1 when it has errors (printed on stderr as
`file:line:column: error: message` with the source line and carets, all at once),
2 on a usage error or when FILE cannot be read.";

/// The scan compiler: expand, explain or check a `.scan` file.
#[derive(Parser)]
#[command(name = "scanc", version, after_help = AFTER_HELP)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Print the generated Rust for FILE, as a build script using scan_codegen::Builder
    /// writes it (header included)
    Expand {
        /// The .scan file
        file: PathBuf,
        /// Which rewrites run: as FILE's `#![rewrites(..)]` says, all of them, or none
        #[arg(long, value_enum, default_value_t = Rewrites::File)]
        rewrites: Rewrites,
        /// The path under which the generated code reaches scan-runtime (for a crate that
        /// re-exports it, e.g. `crate::rt`)
        #[arg(long, value_name = "PATH", default_value = "::scan_runtime")]
        runtime_path: String,
        /// Print the tokens on one line instead of pretty-printing them
        #[arg(long)]
        no_pretty: bool,
    },
    /// Print the scan graph of each function in FILE: before the rewrites, the rewrites
    /// that fired in order, and after them (with each scan's taps, output kinds and kept
    /// rows)
    Explain {
        /// The .scan file
        file: PathBuf,
    },
    /// Only report the errors in FILE (nothing is printed when there are none)
    Check {
        /// The .scan file
        file: PathBuf,
    },
}

#[derive(Clone, Copy, ValueEnum)]
enum Rewrites {
    /// As the file's `#![rewrites(..)]` says (all when it says nothing)
    File,
    /// Every pass
    All,
    /// No pass
    None,
}

/// How a command ended.
enum Failure {
    /// Errors in the file: status 1.
    InFile(Errors),
    /// The command could not do its work: status 2.
    Cannot(String),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli.command) {
        Ok(()) => ExitCode::SUCCESS,
        Err(Failure::InFile(errors)) => {
            let _ = write!(std::io::stderr(), "{errors}");
            let n = errors.len();
            let _ = writeln!(
                std::io::stderr(),
                "scanc: {n} error{} in {}",
                if n == 1 { "" } else { "s" },
                errors.file()
            );
            ExitCode::from(1)
        }
        Err(Failure::Cannot(message)) => {
            let _ = writeln!(std::io::stderr(), "scanc: {message}");
            ExitCode::from(2)
        }
    }
}

fn run(command: Command) -> Result<(), Failure> {
    match command {
        Command::Expand {
            file,
            rewrites,
            runtime_path,
            no_pretty,
        } => {
            let (name, source) = read(&file)?;
            let mut builder = Builder::new();
            builder.pretty(!no_pretty);
            if runtime_path != "::scan_runtime" {
                builder.runtime_path(runtime_path);
            }
            match rewrites {
                Rewrites::File => {}
                Rewrites::All => {
                    builder.rewrites(true);
                }
                Rewrites::None => {
                    builder.rewrites(false);
                }
            }
            let text = builder
                .expand_file(&name, &source)
                .map_err(Failure::InFile)?;
            print(&text)
        }
        Command::Explain { file } => {
            let (name, source) = read(&file)?;
            scan_codegen::builder::check(&source).map_err(|e| Failure::InFile(e.in_file(&name)))?;
            match scan_codegen::explain(&source) {
                Ok(text) => print(&text),
                // Not expected once check passed: the same front end.
                Err(e) => Err(Failure::InFile(Errors::unlocated(name, e))),
            }
        }
        Command::Check { file } => {
            let (name, source) = read(&file)?;
            scan_codegen::builder::check(&source).map_err(|e| Failure::InFile(e.in_file(name)))
        }
    }
}

/// The file's name as the user gave it, and its text.
fn read(file: &std::path::Path) -> Result<(String, String), Failure> {
    let name = file.display().to_string();
    match std::fs::read_to_string(file) {
        Ok(source) => Ok((name, source)),
        Err(e) => Err(Failure::Cannot(format!("cannot read {name}: {e}"))),
    }
}

/// Writes to stdout; a closed pipe (`scanc expand f | head`) ends the command quietly.
fn print(text: &str) -> Result<(), Failure> {
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        Err(e) => Err(Failure::Cannot(format!("cannot write the output: {e}"))),
    }
}

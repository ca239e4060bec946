//! The `ort-bind` command line: inspect a model's signature, print the bindings
//! build-time codegen would write. A thin front end over `ort-bind-codegen`.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

#[path = "prepare.rs"]
mod prepare_command;
#[path = "run.rs"]
mod run_command;

/// Typed, zero-copy ONNX Runtime bindings from ONNX model files.
#[derive(Debug, Parser)]
#[command(name = "ort-bind", version)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Show a model's inputs, outputs, opsets and producer.
    Inspect {
        /// Print one JSON object `{"inputs": [...], "outputs": [...]}` instead of a table.
        #[arg(long)]
        json: bool,
        /// Print long metadata values whole (the table summarises them).
        #[arg(long)]
        full: bool,
        /// The ONNX model file.
        model: PathBuf,
    },
    /// Print the Rust module build-time codegen writes for a model.
    Generate {
        /// Path of the runtime crate in the generated code.
        #[arg(long, default_value = "::ort_bind")]
        runtime: String,
        /// The ONNX model file.
        model: PathBuf,
    },
    /// Run a model on inputs from `.npy` / TensorProto `.pb` files; write outputs as `.npy`
    /// (`.pb` for narrow types and containers); compare with expected outputs (non-zero
    /// exit on a mismatch).
    Run(run_command::RunArgs),
    /// Write the offline signature cache (`.ort-bind/<model path>.json`, to commit) that
    /// `#[derive(OnnxBinding)]` and `bindings!` use where a model file is absent;
    /// `--check` verifies it against the models instead.
    Prepare(prepare_command::PrepareArgs),
}

fn run(cli: Cli) -> Result<(), String> {
    match cli.command {
        Command::Inspect { json, full, model } => {
            let sig = ort_bind_codegen::read_signature(&model).map_err(|e| e.to_string())?;
            if json {
                println!("{}", ort_bind_codegen::__private::report::to_json(&sig));
            } else {
                print!(
                    "{}",
                    ort_bind_codegen::__private::report::to_table(&sig, full)
                );
            }
        }
        Command::Generate { runtime, model } => {
            let modules = ort_bind_codegen::Builder::new()
                .runtime_path(&runtime)
                .model(&model)
                .generate()
                .map_err(|e| e.to_string())?;
            for m in modules {
                print!("{}", m.source);
            }
        }
        Command::Run(args) => run_command::run(args)?,
        Command::Prepare(args) => prepare_command::run(args)?,
    }
    Ok(())
}

fn main() -> ExitCode {
    match run(Cli::parse()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

//! Where the pretrained model folder is: `--model DIR` if given, else `$ANATOMY_MODEL_DIR`, else the
//! folder `make setup` fills (`models/all-MiniLM-L6-v2` in the project).
use std::path::PathBuf;

use anyhow::{bail, Result};

/// The folder set-up makes: `models/all-MiniLM-L6-v2` in the project, found when the program runs (so a
/// moved checkout finds its own), unless the build named another (a students' copy's build does).
pub fn default_model_dir() -> Option<PathBuf> {
    let named = option_env!("ANATOMY_DEFAULT_MODEL_DIR").map(PathBuf::from);
    named.or_else(|| Some(crate::project::project_root().join("models").join("all-MiniLM-L6-v2")))
}

/// Resolves the model folder and checks that it holds a `config.json` and a `tokenizer.json`.
pub fn resolve_model_dir(explicit: Option<PathBuf>) -> Result<PathBuf> {
    let dir = explicit.or_else(|| std::env::var_os("ANATOMY_MODEL_DIR").map(PathBuf::from)).or_else(default_model_dir);
    let Some(dir) = dir else {
        bail!("no model folder: pass --model DIR or set ANATOMY_MODEL_DIR, or run `make setup`");
    };
    // `make setup` fills (and repairs) its own folder only: for another, it is not the fix.
    let fix = if std::path::absolute(&dir).ok() == default_model_dir() {
        "run `make setup`, which restores what it installed"
    } else {
        "pass --model a folder that holds the model, or leave out --model and ANATOMY_MODEL_DIR for the one \
         `make setup` fills"
    };
    if !dir.is_dir() {
        bail!("the model folder {} does not exist: {fix}", dir.display());
    }
    for file in ["config.json", "tokenizer.json"] {
        if !dir.join(file).is_file() {
            bail!("the model folder {} has no {file}: {fix}", dir.display());
        }
    }
    Ok(dir)
}

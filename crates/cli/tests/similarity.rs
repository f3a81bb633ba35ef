//! The similarity report, through the binary as an instructor runs it, on the made-up class of
//! `tests/similarity-class/` (see its README): the two copied pairs are found, with renamed names,
//! moved items and changed comments; the genuinely different correct answers and the students who wrote
//! the reference solution's shape are not.
//!
//! It needs `solutions/` (the reference solution is part of the base code the report takes out).
#![cfg(anatomy_solutions)]

#[path = "../../../tests/common/class.rs"]
mod class;
#[path = "../../../tests/common/test_dir.rs"]
mod test_dir;

use anatomy_course::project_root;
use class::anatomy;
use test_dir::TestDir;

/// Each pair with its evidence ("strong" or "weak").
fn evidence(json: &str) -> Vec<(String, [String; 2], f64, String)> {
    json.lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .map(|p| {
            let s = |i: usize| p["students"][i].as_str().unwrap().to_string();
            let evidence = p["evidence"].as_str().unwrap().to_string();
            (p["exercise"].as_str().unwrap().to_string(), [s(0), s(1)], p["score"].as_f64().unwrap(), evidence)
        })
        .collect()
}

#[test]
fn copied_pairs_are_found_and_independent_answers_and_the_references_shape_are_not() {
    let class = project_root().join("tests").join("similarity-class");
    let class = class.to_str().unwrap();
    let only = ["--only", "scaled_dot_product,layer_norm"];
    let (code, out, err) = anatomy(&[&["exercises", "similarity", class, "--json"][..], &only[..]].concat());
    assert_eq!(code, Some(0), "{err}");
    let found = evidence(&out);
    let names: Vec<(String, [String; 2], String)> =
        found.iter().map(|(e, s, _, evidence)| (e.clone(), s.clone(), evidence.clone())).collect();
    let pair = |e: &str, a: &str, b: &str, evidence: &str| {
        (e.to_string(), [a.to_string(), b.to_string()], evidence.to_string())
    };
    // The two copies, strong; and two students who each wrote layer_norm's most natural E[x²] − E[x]² form:
    // their score reaches the threshold, but what they share is less than one answer holds, so the report
    // says the evidence is weak.
    assert_eq!(
        names,
        vec![
            pair("scaled_dot_product", "copy-fay", "loop-eve", "strong"),
            pair("layer_norm", "copy-ivy", "sums-gus", "strong"),
            pair("layer_norm", "moments-lou", "moments-max", "weak"),
        ],
        "{out}"
    );
    for (_, _, score, _) in &found {
        assert!((0.5..=1.0).contains(score), "{out}");
    }
    assert!(err.contains("3 pairs at or above 0.50, 1 of them weak evidence"), "{err}");

    // With no threshold, every other pair is listed with its score: all well below the copies, and the
    // two students who wrote the reference's shape share nothing beyond it.
    let (_, all, _) =
        anatomy(&[&["exercises", "similarity", class, "--json", "--threshold", "0"][..], &only[..]].concat());
    for (exercise, students, score, evidence) in evidence(&all) {
        let copied = students == ["copy-fay", "loop-eve"] || students == ["copy-ivy", "sums-gus"];
        let natural = students == ["moments-lou", "moments-max"];
        if !copied && !natural {
            // disguise-jo's copy of loop-eve (a helper extracted, temporaries, dead code) is among these:
            // winnowing misses it (0.13), a limit the README states.
            assert!(score < 0.25, "{exercise}: {students:?} scored {score}");
        }
        assert_eq!(evidence == "strong", copied, "{exercise}: {students:?} is {evidence} evidence");
        assert!(!(students.contains(&"ref-ana".to_string()) && students.contains(&"ref-ben".to_string())), "{all}");
    }

    // The Markdown table and the side-by-side page.
    let work = TestDir::new("similarity-html");
    let page = work.join("report.html");
    let (code, table, _) =
        anatomy(&[&["exercises", "similarity", class, "--html", page.to_str().unwrap()][..], &only[..]].concat());
    assert_eq!(code, Some(0));
    assert!(table.contains("## `scaled_dot_product`") && table.contains("| copy-fay and loop-eve | 0."), "{table}");
    assert!(table.contains("| moments-lou and moments-max | 0.69 | 9 | weak: they share 9 fingerprints"), "{table}");
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(html.contains("<title>Similarity report") && html.contains("copy-ivy and sums-gus"), "{html}");
    assert!(html.contains("<p>Evidence: weak: they share 9 fingerprints") && html.contains("<p>Evidence: strong.</p>"));
    assert!(html.contains("<mark>") && html.contains("sum_dim_intlist"), "the matching lines are shown and marked");
}

#[test]
fn links_are_not_followed_and_bad_input_gets_one_line() {
    let work = TestDir::new("similarity-links");
    let class = work.join("class");
    let source = project_root().join("tests/similarity-class/loop-eve/scaled_dot_product.rs");
    for student in ["a", "b"] {
        std::fs::create_dir_all(class.join(student)).unwrap();
    }
    std::fs::copy(&source, class.join("a/scaled_dot_product.rs")).unwrap();
    std::os::unix::fs::symlink(&source, class.join("b/scaled_dot_product.rs")).unwrap();
    let (code, out, err) =
        anatomy(&["exercises", "similarity", class.to_str().unwrap(), "--only", "scaled_dot_product", "--json"]);
    assert_eq!(code, Some(0), "{err}");
    assert!(out.is_empty(), "a link is not compared: {out}");
    assert!(err.contains("b/scaled_dot_product.rs is a symbolic link"), "{err}");

    // Files past what the grader reads: not compared, each with one line that names the bound.
    for (student, file) in [("c", "deep.warmup_schedule.rs"), ("d", "deep.shift_right.rs")] {
        std::fs::create_dir_all(class.join(student)).unwrap();
        let exercise = file.split('.').nth(1).unwrap();
        std::fs::copy(
            project_root().join("tests/hostile-class").join(file),
            class.join(student).join(format!("{exercise}.rs")),
        )
        .unwrap();
    }
    let (code, _, err) = anatomy(&["exercises", "similarity", class.to_str().unwrap(), "--json"]);
    assert_eq!(code, Some(0), "{err}");
    assert!(err.contains("c/warmup_schedule.rs:4: nests brackets more than 64 levels deep"), "{err}");
    assert!(err.contains("d/shift_right.rs:6: is longer than the 16384 tokens"), "{err}");

    for (args, words) in [
        (vec!["--threshold", "2"], "--threshold must lie between 0 and 1"),
        (vec!["--only", "layer_nrom"], "no exercise named \"layer_nrom\""),
    ] {
        let (code, out, err) =
            anatomy(&[&["exercises", "similarity", class.to_str().unwrap()][..], &args[..]].concat());
        assert_eq!(code, Some(1), "{err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.contains(words) && out.is_empty(), "{err}");
    }
    let (code, _, err) = anatomy(&["exercises", "similarity", work.join("nowhere").to_str().unwrap()]);
    assert_eq!(code, Some(1));
    assert!(err.contains("is not a folder of student folders"), "{err}");
}

/// The base code is what keeps the reference solution's shape from being a match: without it, the two
/// students who wrote that shape would be reported.
#[test]
fn without_the_base_code_the_references_shape_would_be_a_match() {
    use anatomy_intake::similarity::{compare, StudentFile};
    let e = anatomy_course::find("layer_norm").unwrap();
    let read = |student: &str| {
        std::fs::read_to_string(project_root().join(format!("tests/similarity-class/{student}/layer_norm.rs"))).unwrap()
    };
    let entries: Vec<StudentFile> =
        ["ref-ana", "ref-ben"].iter().map(|s| StudentFile { student: s.to_string(), text: read(s) }).collect();
    let alone = compare("layer_norm", &entries, &[], 0.5);
    assert_eq!(alone.len(), 1, "{alone:?}");
    assert!(alone[0].score > 0.9, "{alone:?}");
    let reference = std::fs::read_to_string(e.solution_file()).unwrap();
    assert!(compare("layer_norm", &entries, &[e.stub, &reference], 0.0).is_empty());
}

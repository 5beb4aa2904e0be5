//! hookcc's own options: the tests of their parsing (`take_own_options`) and of what they
//! make (`HookOptions`, `PassConfig`).

use super::*;
use names::{edit_distance_within, OWN_OPTIONS};

#[test]
fn ti_options_with_defaults_and_names() {
    let (o, rest) = take_own_options(
        &strings(&[
            "--entry_hook",
            "--exit_hook=my_exit",
            "--exit_parm=name",
            "-c",
            "a.c",
        ]),
        &no_env,
    )
    .unwrap();
    assert_eq!(rest, ["-c", "a.c"]);
    let c = o.pass_config().unwrap();
    assert_eq!(
        c.entry,
        Some(Hook {
            symbol: "__entry_hook".into(),
            parm: HookParm::None
        })
    );
    assert_eq!(
        c.exit,
        Some(Hook {
            symbol: "my_exit".into(),
            parm: HookParm::Name
        })
    );
    assert!(c.skip_inline && c.declare_hooks);
    assert_eq!(c.placement, HookPlacement::Source);
    let e =
        take_own_options(&strings(&["--entry_hook", "--entry_parm=adress"]), &no_env).unwrap_err();
    assert!(e.to_string().contains("name, address, none"), "{e}");
    let e = take_own_options(&strings(&["--entry_hook=1bad"]), &no_env).unwrap_err();
    assert!(e.to_string().contains("C identifier"), "{e}");
}

#[test]
fn nitro_from_make_variables() {
    let env = |k: &str| match k {
        "NITRO_PROFILE" => Some("TRUE".to_string()),
        "NITRO_PROFILE_TYPE" => Some("CALLTRACE".to_string()),
        _ => None,
    };
    let (o, _) = take_own_options(&strings(&["-c", "a.c"]), &env).unwrap();
    assert!(o.profile);
    assert_eq!(o.runtime_component(), RuntimeComponent::CallTrace);
    let c = o.pass_config().unwrap();
    assert_eq!(c.entry.unwrap().symbol, "__PROFILE_ENTRY");
    assert!(c.default_on);
    // The dialect without -profile: only #pragma profile on functions.
    let (o, _) = take_own_options(&strings(&["--dialect=nitro"]), &no_env).unwrap();
    assert!(!o.pass_config().unwrap().default_on);
    // Set but empty, as make exports a variable the Makefile never set: not the dialect.
    let empty = |k: &str| k.starts_with("NITRO_PROFILE").then(String::new);
    let (o, _) = take_own_options(&strings(&["a.c"]), &empty).unwrap();
    assert!(!o.nitro && !o.instruments());
    let bad = |k: &str| (k == "NITRO_PROFILE_TYPE").then(|| "COST".to_string());
    assert!(take_own_options(&strings(&[]), &bad)
        .unwrap_err()
        .to_string()
        .contains("FUNCTIONCOST"));
}

#[test]
fn gprof_runtime_brings_its_arc_hook() {
    let (o, _) = take_own_options(&strings(&["--hook-runtime=gprof", "a.c"]), &no_env).unwrap();
    let c = o.pass_config().unwrap();
    assert_eq!(
        c.entry,
        Some(Hook {
            symbol: "__profile_mcount".into(),
            parm: HookParm::CallSiteAddress
        })
    );
    assert!(c.exit.is_none() && c.default_on);
    assert_eq!(c.placement, HookPlacement::AfterInlining);
    let e = take_own_options(&strings(&["--trace", "--hook-runtime=gprof"]), &no_env).unwrap_err();
    assert!(
        e.to_string().contains("cannot be combined with --trace"),
        "{e}"
    );
}

#[test]
fn placement_is_one_option_every_dialect_takes() {
    let placement = |args: &[&str]| {
        take_own_options(&strings(args), &no_env)
            .unwrap()
            .0
            .pass_config()
            .unwrap()
            .placement
    };
    // Each dialect's default.
    assert_eq!(placement(&["--trace"]), HookPlacement::Auto);
    assert_eq!(placement(&["--entry_hook"]), HookPlacement::Source);
    assert_eq!(placement(&["-profile"]), HookPlacement::Source);
    assert_eq!(
        placement(&["-finstrument-functions"]),
        HookPlacement::Source
    );
    assert_eq!(
        placement(&["--hook-runtime=gprof"]),
        HookPlacement::AfterInlining
    );
    // The TI spelling works with the native trace too (it used to be dropped there).
    assert_eq!(
        placement(&["--trace", "--remove_hooks_when_inlining"]),
        HookPlacement::AfterInlining
    );
    for (args, expected) in [
        (
            &["--trace", "--hook-placement=source"][..],
            HookPlacement::Source,
        ),
        (
            &["-profile", "--hook-placement=after-inlining"],
            HookPlacement::AfterInlining,
        ),
        (
            &["--entry_hook", "--hook-placement=auto"],
            HookPlacement::Auto,
        ),
        (
            &["--hook-runtime=gprof", "--hook-placement=source"],
            HookPlacement::Source,
        ),
        (
            &["--pfp-functions=f", "--hook-placement=after-inlining"],
            HookPlacement::AfterInlining,
        ),
        (
            &[
                "-finstrument-functions-after-inlining",
                "--hook-placement=source",
            ],
            HookPlacement::Source,
        ),
    ] {
        assert_eq!(placement(args), expected, "{args:?}");
    }
    let e = take_own_options(&strings(&["--trace", "--hook-placement=late"]), &no_env)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("--hook-placement=late") && e.contains("after-inlining, auto, source"),
        "{e}"
    );
    let e = take_own_options(
        &strings(&["--hook-placement=source", "--remove_hooks_when_inlining"]),
        &no_env,
    )
    .unwrap_err()
    .to_string();
    assert!(
        e.contains("--hook-placement=source and --remove_hooks_when_inlining"),
        "{e}"
    );
}

#[test]
fn exclude_crate_lists_add_up_and_bad_names_are_refused() {
    let (o, rest) = take_own_options(
        &strings(&[
            "--trace",
            "--hook-exclude-crate=std,core",
            "--hook-exclude-crate=alloc,,serde_*",
            "-O2",
        ]),
        &no_env,
    )
    .unwrap();
    assert_eq!(rest, ["-O2"]);
    assert_eq!(
        o.pass_config().unwrap().exclude_crates,
        ["std", "core", "alloc", "serde_*"]
    );
    for bad in ["--hook-exclude-crate=", "--hook-exclude-crate=serde-json"] {
        let e = take_own_options(&strings(&["--trace", bad]), &no_env)
            .unwrap_err()
            .to_string();
        assert!(e.contains(bad) && e.contains("serde_json"), "{e}");
    }
}

#[test]
fn dialects_do_not_mix() {
    let e = take_own_options(&strings(&["--trace", "-profile"]), &no_env).unwrap_err();
    assert!(e.to_string().contains("--trace and -profile"), "{e}");
}

fn no_env(_: &str) -> Option<String> {
    None
}

fn strings(args: &[&str]) -> Vec<String> {
    args.iter().map(|s| s.to_string()).collect()
}

#[test]
fn table_is_sorted() {
    for pair in OWN_OPTIONS.windows(2) {
        assert!(
            pair[0].0 < pair[1].0,
            "OWN_OPTIONS not sorted at {}",
            pair[1].0
        );
    }
}

#[test]
fn own_options_are_removed_in_order() {
    let (o, rest) = take_own_options(
        &strings(&["-O2", "--trace", "-c", "a.c", "--hook-runtime=none"]),
        &no_env,
    )
    .unwrap();
    assert!(o.trace);
    assert_eq!(o.runtime_component(), RuntimeComponent::None);
    assert_eq!(rest, ["-O2", "-c", "a.c"]);
}

#[test]
fn environment_turns_tracing_on() {
    let env = |k: &str| (k == "HOOKCC_TRACE").then(|| "1".to_string());
    let (o, _) = take_own_options(&strings(&["a.c"]), &env).unwrap();
    assert!(o.trace && o.instruments());
    assert_eq!(o.runtime_component(), RuntimeComponent::Trace);
}

#[test]
fn glob_files_expand_in_place() {
    let dir = std::env::temp_dir().join(format!("hookcc-globs-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("exclude.txt");
    std::fs::write(&file, "# hot paths\ncrc_byte\n\n  mycrate::parse::*  \n").unwrap();
    let arg = format!("--hook-exclude=@{}", file.display());
    let (mut o, _) =
        take_own_options(&strings(&["--trace", "--hook-exclude=a", &arg]), &no_env).unwrap();
    read_glob_files(&mut o).unwrap();
    assert_eq!(o.exclude, ["a", "crc_byte", "mycrate::parse::*"]);
    let (mut o, _) =
        take_own_options(&strings(&["--hook-include=@/nonexistent/list"]), &no_env).unwrap();
    let e = read_glob_files(&mut o).unwrap_err();
    assert!(e.contains("--hook-include=@/nonexistent/list"), "{e}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn edit_distances_within_a_limit() {
    assert_eq!(edit_distance_within("--trce", "--trace", 2), Some(1));
    assert_eq!(edit_distance_within("--tarce", "--trace", 2), Some(1));
    assert_eq!(edit_distance_within("--tracee", "--trace", 1), Some(1));
    assert_eq!(edit_distance_within("--trace", "--trace", 0), Some(0));
    assert_eq!(edit_distance_within("--tr", "--trace", 2), None);
    assert_eq!(edit_distance_within("-Wno-unused", "--hook-exclu", 2), None);
    assert_eq!(edit_distance_within("abcdef", "badcfe", 3), Some(3));
    assert_eq!(edit_distance_within("abcdef", "badcfe", 2), None);
}

#[test]
fn misspelt_own_options_are_found_and_clangs_own_left_alone() {
    for (typed, meant) in [
        ("--trce", "--trace"),
        ("--tarce", "--trace"),
        ("-trace", "--trace"),
        ("--tracee", "--trace"),
        ("--hook-placment=source", "--hook-placement="),
        ("--hook-placement", "--hook-placement="),
        ("--rustflag", "--rustflags"),
        ("--entry-hook", "--entry_hook"),
        ("-profil", "-profile"),
        ("--trace-strat=main", "--trace-start="),
        ("-finstrument-function", "-finstrument-functions"),
    ] {
        assert_eq!(near_own_option(typed), Some(meant), "{typed}");
    }
    // Exactly hookcc's, far from all of them, not an option at all.
    for arg in [
        "--trace",
        "--hook-placement=source",
        "-O2",
        "-o",
        "--target=x",
        "-fprofile-arcs",
        "trce",
        "--verbose",
    ] {
        assert_eq!(near_own_option(arg), None, "{arg}");
    }
    let e = take_own_options(&strings(&["--hook-placment=source"]), &no_env)
        .unwrap_err()
        .to_string();
    assert!(e.contains("did you mean `--hook-placement=`?"), "{e}");
}

#[test]
fn errors_name_the_option() {
    let e = take_own_options(&strings(&["--hook-runtime=tarce"]), &no_env).unwrap_err();
    assert!(
        e.to_string().contains("tarce") && e.to_string().contains("ti, trace"),
        "{e}"
    );
    let e = take_own_options(&strings(&["--trace-all"]), &no_env).unwrap_err();
    assert!(e.to_string().contains("--trace-all"));
    let env = |_: &str| Some("maybe".to_string());
    let e = take_own_options(&strings(&[]), &env).unwrap_err();
    assert!(e.to_string().contains("HOOKCC_TRACE"));
}

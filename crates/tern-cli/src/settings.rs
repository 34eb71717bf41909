//! Settings of `tern serve` from a TOML file (`--config FILE`, or the
//! `TERN_CONFIG` environment variable) and from environment variables
//! (`TERN_PORT=8080` for `--port 8080`), below the command line: a flag
//! given on the command line wins over the environment, which wins over
//! the file. Keys of the file are the flags' long names (`max-queued` or
//! `max_queued`); see `tern.example.toml`.
//!
//! They are turned into command-line flags before the command line is
//! parsed, so they are checked exactly as flags are, and a setting the
//! file misspells is refused with the names it could have meant.

use clap::{Arg, ArgAction, Command};
use std::ffi::OsString;
use std::path::PathBuf;

/// Where the settings added to the command line came from, for messages.
#[derive(Debug, Default, PartialEq)]
pub struct Sources {
    pub file: Option<PathBuf>,
    /// (key, value) taken from the file.
    pub from_file: Vec<String>,
    /// Environment variables taken.
    pub from_env: Vec<String>,
}

impl Sources {
    /// A note for an error in a value that may have come from here.
    pub fn note(&self) -> Option<String> {
        let mut parts = Vec::new();
        if let (Some(file), false) = (&self.file, self.from_file.is_empty()) {
            parts.push(format!(
                "{} set {}",
                file.display(),
                self.from_file.join(", ")
            ));
        }
        if !self.from_env.is_empty() {
            parts.push(format!("the environment set {}", self.from_env.join(", ")));
        }
        (!parts.is_empty()).then(|| format!("note: {}", parts.join("; ")))
    }
}

/// Flags whose environment variable means something else: it holds the
/// secret itself, the flag names a file holding it.
const ENV_HOLDS_SECRET: &[&str] = &["update-token", "token-key"];

/// `args` (a whole command line, program name first) with the settings of
/// the config file and the environment added for `subcommand`'s flags that
/// the command line does not set. `env` looks up environment variables.
pub fn overlay(
    args: Vec<OsString>,
    command: &Command,
    subcommand: &str,
    env: impl Fn(&str) -> Option<String>,
) -> Result<(Vec<OsString>, Sources), String> {
    let mut sources = Sources::default();
    if args.get(1).and_then(|a| a.to_str()) != Some(subcommand) {
        return Ok((args, sources));
    }
    let Some(sub) = command.find_subcommand(subcommand) else {
        return Ok((args, sources));
    };
    let given: Vec<&str> = args[2..].iter().filter_map(|a| a.to_str()).collect();
    let on_command_line = |long: &str| {
        given.iter().any(|a| {
            a.strip_prefix("--")
                .is_some_and(|rest| rest == long || rest.starts_with(&format!("{long}=")))
        })
    };
    let config_path = flag_value(&given, "config").map(PathBuf::from).or_else(|| {
        env("TERN_CONFIG")
            .filter(|p| !p.is_empty())
            .map(PathBuf::from)
    });
    let file = match &config_path {
        Some(path) => read_table(path)?,
        None => toml::Table::new(),
    };
    let flags: Vec<&Arg> = sub
        .get_arguments()
        .filter(|a| {
            a.get_long()
                .is_some_and(|l| !["config", "help", "version"].contains(&l))
        })
        .filter(|a| !a.is_hide_set())
        .collect();
    check_keys(&file, &flags, config_path.as_deref())?;
    sources.file = config_path;
    let mut added: Vec<OsString> = Vec::new();
    for arg in flags {
        let long = arg.get_long().expect("filtered on long names");
        if on_command_line(long) {
            continue;
        }
        let var = format!("TERN_{}", long.to_uppercase().replace('-', "_"));
        let from_env = (!ENV_HOLDS_SECRET.contains(&long))
            .then(|| env(&var))
            .flatten()
            .filter(|v| !v.is_empty());
        if let Some(value) = from_env {
            let values: Vec<String> = if matches!(arg.get_action(), ArgAction::Append) {
                value.split(',').map(|v| v.trim().to_owned()).collect()
            } else {
                vec![value.clone()]
            };
            added.extend(as_flags(
                arg,
                long,
                values.into_iter().map(Setting::Text),
                &var,
            )?);
            sources.from_env.push(format!("{var}={value}"));
            continue;
        }
        let key = [long.to_owned(), long.replace('-', "_")]
            .into_iter()
            .find(|k| file.contains_key(k));
        if let Some(key) = key {
            let value = &file[&key];
            let settings = match value {
                toml::Value::Array(items) => {
                    items.iter().map(setting).collect::<Result<Vec<_>, _>>()
                }
                other => setting(other).map(|s| vec![s]),
            }
            .map_err(|e| {
                format!(
                    "{}: `{key}`: {e}",
                    sources.file.as_ref().expect("a file").display()
                )
            })?;
            let origin = format!(
                "`{key}` in {}",
                sources.file.as_ref().expect("a file").display()
            );
            added.extend(as_flags(arg, long, settings.into_iter(), &origin)?);
            sources.from_file.push(format!("{key} = {value}"));
        }
    }
    let mut out = args[..2].to_vec();
    out.extend(added);
    out.extend(args[2..].iter().cloned());
    Ok((out, sources))
}

/// One value of a setting.
enum Setting {
    Text(String),
    Bool(bool),
}

fn setting(value: &toml::Value) -> Result<Setting, String> {
    Ok(match value {
        toml::Value::String(s) => Setting::Text(s.clone()),
        toml::Value::Integer(i) => Setting::Text(i.to_string()),
        toml::Value::Float(f) => Setting::Text(f.to_string()),
        toml::Value::Boolean(b) => Setting::Bool(*b),
        toml::Value::Datetime(d) => Setting::Text(d.to_string()),
        toml::Value::Array(_) => return Err("a list inside a list".into()),
        toml::Value::Table(_) => return Err("a table, where a value was expected".into()),
    })
}

/// The flags that set `values` for `arg`.
fn as_flags(
    arg: &Arg,
    long: &str,
    values: impl Iterator<Item = Setting>,
    origin: &str,
) -> Result<Vec<OsString>, String> {
    let switch = matches!(arg.get_action(), ArgAction::SetTrue);
    let repeatable = matches!(arg.get_action(), ArgAction::Append);
    let mut flags = Vec::new();
    for value in values {
        match (value, switch) {
            (Setting::Bool(true), true) => flags.push(format!("--{long}").into()),
            (Setting::Bool(false), true) => {}
            (Setting::Text(text), true) => match text.as_str() {
                "1" | "true" | "yes" | "on" => flags.push(format!("--{long}").into()),
                "0" | "false" | "no" | "off" => {}
                _ => {
                    return Err(format!(
                        "{origin}: --{long} is a switch: use true or false, not {text:?}"
                    ))
                }
            },
            (Setting::Bool(b), false) => flags.push(format!("--{long}={b}").into()),
            (Setting::Text(text), false) => flags.push(format!("--{long}={text}").into()),
        }
    }
    if flags.len() > 1 && !repeatable {
        return Err(format!("{origin}: --{long} takes one value, not a list"));
    }
    Ok(flags)
}

/// The value of `--name VALUE` or `--name=VALUE` on a command line.
fn flag_value(given: &[&str], name: &str) -> Option<String> {
    let flag = format!("--{name}");
    let with_eq = format!("--{name}=");
    given.iter().enumerate().find_map(|(i, a)| {
        if *a == flag {
            given.get(i + 1).map(|v| (*v).to_owned())
        } else {
            a.strip_prefix(&with_eq).map(str::to_owned)
        }
    })
}

fn read_table(path: &std::path::Path) -> Result<toml::Table, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read the config file {}: {e}", path.display()))?;
    text.parse::<toml::Table>()
        .map_err(|e| format!("{} is not valid TOML: {e}", path.display()))
}

/// Refuses keys that are not settings, naming the closest ones.
fn check_keys(
    file: &toml::Table,
    flags: &[&Arg],
    path: Option<&std::path::Path>,
) -> Result<(), String> {
    let known: Vec<&str> = flags.iter().filter_map(|a| a.get_long()).collect();
    for key in file.keys() {
        let long = key.replace('_', "-");
        if known.contains(&long.as_str()) {
            continue;
        }
        let mut close: Vec<&str> = known
            .iter()
            .copied()
            .filter(|k| edit_distance(k, &long) <= 2 || k.contains(long.as_str()))
            .collect();
        close.truncate(3);
        let hint = if close.is_empty() {
            format!("the settings are: {}", known.join(", "))
        } else {
            format!("did you mean {}?", close.join(" or "))
        };
        let file = path.map_or_else(String::new, |p| p.display().to_string());
        return Err(format!("{file}: unknown setting `{key}`; {hint}"));
    }
    Ok(())
}

fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, &cb) in b.iter().enumerate() {
            let cost = usize::from(ca != cb);
            let next = (row[j + 1] + 1).min(row[j] + 1).min(prev + cost);
            prev = row[j + 1];
            row[j + 1] = next;
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Cli {
        #[command(subcommand)]
        command: Sub,
    }

    #[derive(clap::Subcommand)]
    enum Sub {
        Serve {
            #[arg(long)]
            config: Option<PathBuf>,
            #[arg(long, default_value_t = 7070)]
            port: u16,
            #[arg(long)]
            max_queued: Option<usize>,
            #[arg(long)]
            load_http: bool,
            #[arg(long)]
            load_dir: Vec<String>,
            #[arg(long)]
            update_token: Option<PathBuf>,
        },
    }

    fn run(
        cli: &[&str],
        file: &str,
        env: &[(&str, &str)],
    ) -> Result<(Vec<String>, Sources), String> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("tern.toml");
        std::fs::write(&path, file).unwrap();
        let mut args: Vec<OsString> = cli.iter().map(OsString::from).collect();
        args.push("--config".into());
        args.push(path.clone().into());
        let env: Vec<(String, String)> = env
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let command = <Cli as clap::CommandFactory>::command();
        overlay(args, &command, "serve", |k| {
            env.iter()
                .find(|(name, _)| name == k)
                .map(|(_, v)| v.clone())
        })
        .map(|(args, sources)| {
            let args = args
                .into_iter()
                .map(|a| a.into_string().unwrap())
                .filter(|a| !a.ends_with("tern.toml") && a != "--config")
                .collect();
            (args, sources)
        })
    }

    #[test]
    fn command_line_beats_environment_beats_file() {
        let file = "port = 9000\nmax_queued = 5\nload-http = true\nload-dir = [\"/a\", \"/b\"]\n";
        let (args, sources) = run(
            &["tern", "serve", "--port", "8000"],
            file,
            &[("TERN_MAX_QUEUED", "7")],
        )
        .unwrap();
        assert_eq!(
            args,
            [
                "tern",
                "serve",
                "--max-queued=7",
                "--load-http",
                "--load-dir=/a",
                "--load-dir=/b",
                "--port",
                "8000"
            ]
        );
        assert_eq!(sources.from_env, ["TERN_MAX_QUEUED=7"]);
        assert!(sources.note().unwrap().contains("load-http = true"));
        let cli = Cli::try_parse_from(&args).unwrap();
        let Sub::Serve {
            port,
            max_queued,
            load_http,
            load_dir,
            ..
        } = cli.command;
        assert_eq!(
            (port, max_queued, load_http, load_dir.len()),
            (8000, Some(7), true, 2)
        );
    }

    #[test]
    fn bad_settings_are_refused_with_what_was_meant() {
        let err = run(&["tern", "serve"], "prot = 1\n", &[]).unwrap_err();
        assert!(
            err.contains("unknown setting `prot`") && err.contains("port"),
            "{err}"
        );
        let err = run(&["tern", "serve"], "port = [1, 2]\n", &[]).unwrap_err();
        assert!(err.contains("takes one value"), "{err}");
        let err = run(&["tern", "serve"], "port = \n", &[]).unwrap_err();
        assert!(err.contains("not valid TOML"), "{err}");
        let err = run(&["tern", "serve"], "", &[("TERN_LOAD_HTTP", "maybe")]).unwrap_err();
        assert!(err.contains("switch"), "{err}");
        // A value of the wrong type is refused by the flag's own parser.
        let (args, _) = run(&["tern", "serve"], "port = \"eighty\"\n", &[]).unwrap();
        assert!(Cli::try_parse_from(&args).is_err());
    }

    #[test]
    fn secrets_in_the_environment_are_not_file_names() {
        let (args, _) = run(
            &["tern", "serve"],
            "",
            &[("TERN_UPDATE_TOKEN", "s3cret-s3cret-s3cret")],
        )
        .unwrap();
        assert_eq!(args, ["tern", "serve"]);
    }
}

//! tft_train_yaml_rust: train a Temporal Fusion Transformer from a YAML file through the Rust
//! binding; the Rust twin of examples/c/tft_train_yaml.c.
//!
//!     tft_train_yaml_rust [--memory] CONFIG.yaml [KEY=VALUE ...]
//!
//! KEY=VALUE pairs override the file (Config::set), e.g. training.epochs=3 or
//! output.directory=/tmp/run. Progress goes to stderr, one line per epoch; the summary goes to
//! stdout as "name: value" lines with the C runner's printf formats. Exit status: 0 on
//! success, 1 on any error (its message on stderr), 2 on bad usage.
//!
//! --memory: the runner reads data.path's CSV itself, with arrow-csv, into record batches and
//! trains from them in memory (Data::from_reader, Trainer::from_data) instead of letting the
//! library read the file; the summary is the file mode's, bitwise. The columns are typed from
//! the config so that every value is the one the library's own CSV reader gets: the target
//! and the configured reals float64 (parsed correctly rounded, like the library's reader),
//! every other column utf8, as written (categories and series keep their text, "007" stays
//! "007"; the time column's text is parsed by the library as in a file, data.time_format
//! included); a field equal to one of data.na_values is null.
use std::io::Write;
use std::ops::ControlFlow;
use std::process::ExitCode;
use std::sync::Arc;

use arrow_csv::reader::Format;
use arrow_schema::{DataType, Field, Schema};
use tftrain::{Config, Data, Error, ProgressKind, TrainReport, Trainer};

const PROGRAM: &str = "tft_train_yaml_rust";

fn failed(what: &str, e: &Error) -> u8 {
    eprintln!("{PROGRAM}: {what}: {}: {}", e.status(), e.message());
    1
}

fn apply_override(config: &mut Config, assignment: &str) -> u8 {
    let equals = match assignment.find('=') {
        Some(i) if i > 0 => i,
        _ => {
            eprintln!("{PROGRAM}: expected KEY=VALUE, got \"{assignment}\"");
            return 2;
        }
    };
    if equals >= 256 {
        eprintln!("{PROGRAM}: key too long in \"{assignment}\"");
        return 2;
    }
    match config.set(&assignment[..equals], &assignment[equals + 1..]) {
        Ok(()) => 0,
        Err(e) => failed("override", &e),
    }
}

/// The items of a YAML flow sequence as the config prints it ("[a, \"b c\", {name: d, ...}]"):
/// scalars unquoted, a mapping by its name.
fn flow_items(text: &str) -> Vec<String> {
    let text = text.trim();
    let inner = match text.strip_prefix('[').and_then(|t| t.strip_suffix(']')) {
        Some(inner) => inner,
        None if text.is_empty() || text == "~" || text == "null" => return Vec::new(),
        None => text, // a lone scalar (data.target)
    };
    let mut items = Vec::new();
    let (mut item, mut depth, mut quote, mut escaped) = (String::new(), 0, None, false);
    for c in inner.chars() {
        if let Some(q) = quote {
            item.push(c);
            if escaped {
                escaped = false;
            } else if c == '\\' && q == '"' {
                escaped = true;
            } else if c == q {
                quote = None;
            }
            continue;
        }
        match c {
            '"' | '\'' => quote = Some(c),
            '{' | '[' => depth += 1,
            '}' | ']' => depth -= 1,
            ',' if depth == 0 => {
                items.push(std::mem::take(&mut item));
                continue;
            }
            _ => {}
        }
        item.push(c);
    }
    if !item.trim().is_empty() || !items.is_empty() {
        items.push(item);
    }
    items.iter().map(|i| scalar(name_of(i.trim()))).collect()
}

/// A mapping's `name:` value ("{name: month, embedding_dim: 4}"), or the item itself.
fn name_of(item: &str) -> &str {
    match item.strip_prefix('{').and_then(|t| t.strip_suffix('}')) {
        Some(body) => body
            .split(',')
            .find_map(|kv| kv.trim().strip_prefix("name:"))
            .map_or(item, str::trim),
        None => item,
    }
}

/// A YAML scalar's text: quotes removed ("\"\"" is the empty string).
fn scalar(item: &str) -> String {
    if let Some(body) = item.strip_prefix('"').and_then(|t| t.strip_suffix('"')) {
        body.replace("\\\"", "\"").replace("\\\\", "\\")
    } else if let Some(body) = item.strip_prefix('\'').and_then(|t| t.strip_suffix('\'')) {
        body.replace("''", "'")
    } else {
        item.to_string()
    }
}

fn shown(e: &Error) -> String {
    format!("{}: {}", e.status(), e.message())
}

fn config_items(config: &Config, key: &str) -> Result<Vec<String>, String> {
    config
        .get(key)
        .map(|text| flow_items(&text))
        .map_err(|e| shown(&e))
}

/// data.path's CSV read with arrow-csv into a new Data (see the file's comment for the types).
fn load_csv(config: &Config) -> Result<Data, String> {
    let path = scalar(config.get("data.path").map_err(|e| shown(&e))?.trim());
    let io = |e: &dyn std::fmt::Display| format!("{path}: {e}");
    let lower = path.to_ascii_lowercase();
    if lower.ends_with(".parquet") || lower.ends_with(".pq") {
        return Err(format!(
            "{path}: --memory reads a CSV data file (arrow-csv)"
        ));
    }
    let mut reals = config_items(config, "data.target")?;
    for key in [
        "data.static_reals",
        "data.known_reals",
        "data.unknown_reals",
    ] {
        reals.extend(config_items(config, key)?);
    }
    let na_values = config_items(config, "data.na_values")?;
    let null = if na_values.is_empty() {
        "^[^\\s\\S]$".to_string() // nothing is missing
    } else {
        let alternatives: Vec<String> = na_values.iter().map(|v| regex::escape(v)).collect();
        format!("^(?:{})$", alternatives.join("|"))
    };
    let null = regex::Regex::new(&null).map_err(|e| io(&e))?;
    let format = Format::default().with_header(true);
    let file = std::fs::File::open(&path).map_err(|e| io(&e))?;
    let (header, _) = format.infer_schema(file, Some(0)).map_err(|e| io(&e))?;
    let fields: Vec<Field> = header
        .fields()
        .iter()
        .map(|f| {
            let kind = if reals.iter().any(|r| r == f.name()) {
                DataType::Float64
            } else {
                DataType::Utf8
            };
            Field::new(f.name(), kind, true)
        })
        .collect();
    let file = std::fs::File::open(&path).map_err(|e| io(&e))?;
    let reader = arrow_csv::ReaderBuilder::new(Arc::new(Schema::new(fields)))
        .with_format(format)
        .with_null_regex(null)
        .build(file)
        .map_err(|e| io(&e))?;
    // A parse error in a later batch comes back from the library as a Data error carrying it.
    Data::from_reader(reader).map_err(|e| shown(&e))
}

fn run(args: &[String]) -> u8 {
    let memory = args.first().is_some_and(|a| a == "--memory");
    let args = if memory { &args[1..] } else { args };
    if args.is_empty() || args[0] == "-h" || args[0] == "--help" || args[0].starts_with("--") {
        if args
            .first()
            .is_some_and(|a| a.starts_with("--") && a != "--help")
        {
            eprintln!("{PROGRAM}: unknown flag {}", args[0]);
        }
        eprintln!("usage: {PROGRAM} [--memory] CONFIG.yaml [KEY=VALUE ...]");
        return 2;
    }
    let mut config = match Config::load(&args[0]) {
        Ok(c) => c,
        Err(e) => return failed("config", &e),
    };
    for a in &args[1..] {
        let code = apply_override(&mut config, a);
        if code != 0 {
            return code;
        }
    }
    if let Err(e) = config.validate() {
        return failed("config", &e);
    }
    let trainer = if memory {
        match load_csv(&config) {
            Ok(data) => Trainer::from_data(&config, &data),
            Err(e) => {
                eprintln!("{PROGRAM}: data: {e}");
                return 1;
            }
        }
    } else {
        Trainer::new(&config)
    };
    let mut trainer = match trainer {
        Ok(t) => t,
        Err(e) => return failed("trainer", &e),
    };
    let progress = trainer.set_progress(|p| {
        if p.kind == ProgressKind::Epoch {
            eprintln!(
                "epoch {}/{}  train loss {}  validation loss {}  {} samples/s",
                p.epoch,
                p.epochs,
                format_f(p.train_loss, 6),
                format_f(p.validation_loss, 6),
                format_f(p.samples_per_second, 0)
            );
        }
        ControlFlow::Continue(())
    });
    if let Err(e) = progress {
        return failed("trainer", &e);
    }
    match trainer.train() {
        Ok(report) => {
            print_summary(&report);
            0
        }
        Err(e) => failed("training", &e),
    }
}

fn print_summary(r: &TrainReport) {
    let mut out = String::new();
    let mut line = |name: &str, value: String| {
        out.push_str(name);
        out.push_str(": ");
        out.push_str(&value);
        out.push('\n');
    };
    line("epochs_run", r.epochs_run.to_string());
    line("best_epoch", r.best_epoch.to_string());
    line("early_stopped", r.early_stopped.to_string());
    line(
        "initial_validation_loss",
        format_g(r.initial_validation_loss, 9),
    );
    line("best_validation_loss", format_g(r.best_validation_loss, 9));
    line(
        "final_validation_loss",
        format_g(r.final_validation_loss, 9),
    );
    line("final_train_loss", format_g(r.final_train_loss, 9));
    line("q_risk_p50", format_g(r.validation.q_risk_p50, 9));
    line("q_risk_p90", format_g(r.validation.q_risk_p90, 9));
    line("samples_per_second", format_f(r.samples_per_second, 1));
    line("peak_activation_bytes", r.peak_activation_bytes.to_string());
    line(
        "memory_savings_measured",
        format_f(r.memory.measured_savings, 4),
    );
    line(
        "memory_savings_predicted",
        format_f(r.memory.predicted_savings, 4),
    );
    let stdout = std::io::stdout();
    let mut lock = stdout.lock();
    let _ = lock.write_all(out.as_bytes());
    let _ = lock.flush();
}

/// NaN and infinities the way glibc's printf writes them.
fn non_finite(x: f64) -> Option<String> {
    if x.is_nan() {
        Some(if x.is_sign_negative() { "-nan" } else { "nan" }.to_string())
    } else if x.is_infinite() {
        Some(if x < 0.0 { "-inf" } else { "inf" }.to_string())
    } else {
        None
    }
}

/// C's "%.<prec>f" (Rust's fixed formatting is exact and rounds half to even, like glibc).
fn format_f(x: f64, prec: usize) -> String {
    non_finite(x).unwrap_or_else(|| format!("{x:.prec$}"))
}

fn trim_fraction(s: &str) -> &str {
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.')
    } else {
        s
    }
}

/// C's "%.<prec>g".
fn format_g(x: f64, prec: usize) -> String {
    if let Some(s) = non_finite(x) {
        return s;
    }
    let prec = prec.max(1);
    let e = format!("{:.*e}", prec - 1, x); // d.ddde-5: rounded, exponent of the rounded value
    let (mantissa, exponent) = e.split_once('e').expect("exponent");
    let exponent: i32 = exponent.parse().expect("exponent");
    if exponent < -4 || exponent >= prec as i32 {
        let sign = if exponent < 0 { '-' } else { '+' };
        format!("{}e{}{:02}", trim_fraction(mantissa), sign, exponent.abs())
    } else {
        let decimals = (prec as i32 - 1 - exponent) as usize;
        trim_fraction(&format!("{x:.decimals$}")).to_string()
    }
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    ExitCode::from(run(&args))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_match_c() {
        let cases: &[(f64, &str)] = &[
            (0.212486065123, "0.212486065"),
            (0.5, "0.5"),
            (123456789.0, "123456789"),
            (1234567890.0, "1.23456789e+09"),
            (0.0001, "0.0001"),
            (0.00001234, "1.234e-05"),
            (1e100, "1e+100"),
            (0.0, "0"),
            (-0.0, "-0"),
            (-2.5, "-2.5"),
            (f64::NAN, "nan"),
            (f64::INFINITY, "inf"),
            (9.9999999999, "10"),
        ];
        for &(x, want) in cases {
            assert_eq!(format_g(x, 9), want, "{x}");
        }
        assert_eq!(format_f(0.80151, 4), "0.8015");
        assert_eq!(format_f(2.5, 0), "2");
        assert_eq!(format_f(-0.0, 1), "-0.0");
    }

    #[test]
    fn reads_the_configs_flow_lists() {
        assert_eq!(
            flow_items("[price, relative_time_idx]"),
            ["price", "relative_time_idx"]
        );
        assert_eq!(
            flow_items("[promo, {name: month, embedding_dim: 4}, \"a, b\"]"),
            ["promo", "month", "a, b"]
        );
        assert_eq!(flow_items("[\"\"]"), [""]);
        assert_eq!(flow_items("[\"\", NA, 'it''s']"), ["", "NA", "it's"]);
        assert!(flow_items("[]").is_empty());
        assert_eq!(flow_items("sales"), ["sales"]);
    }
}

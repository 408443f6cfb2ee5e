//! tft_train_yaml_rust: train a Temporal Fusion Transformer from a YAML file through the Rust
//! binding; the Rust twin of examples/c/tft_train_yaml.c.
//!
//!     tft_train_yaml_rust CONFIG.yaml [KEY=VALUE ...]
//!
//! KEY=VALUE pairs override the file (Config::set), e.g. training.epochs=3 or
//! output.directory=/tmp/run. Progress goes to stderr, one line per epoch; the summary goes to
//! stdout as "name: value" lines with the C runner's printf formats. Exit status: 0 on
//! success, 1 on any error (its message on stderr), 2 on bad usage.
use std::io::Write;
use std::ops::ControlFlow;
use std::process::ExitCode;

use tftrain::{Config, Error, ProgressKind, TrainReport, Trainer};

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

fn run(args: &[String]) -> u8 {
    if args.is_empty() || args[0] == "-h" || args[0] == "--help" {
        eprintln!("usage: {PROGRAM} CONFIG.yaml [KEY=VALUE ...]");
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
    let mut trainer = match Trainer::new(&config) {
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
}

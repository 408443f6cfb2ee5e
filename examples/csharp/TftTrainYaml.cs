// tft_train_yaml_csharp: train a Temporal Fusion Transformer from a YAML file through the C#
// binding; the C# twin of examples/c/tft_train_yaml.c.
//
//   mono tft_train_yaml_csharp.exe [--memory] CONFIG.yaml [KEY=VALUE ...]
//
// --memory reads data.path's CSV into record batches first (CsvTable.cs) and trains from them
// in memory (Data.FromRecordBatches, an Arrow C stream) instead of letting the library read
// the file; the summary is the same.
// KEY=VALUE pairs override the file (Config.Set), e.g. training.epochs=3 or
// output.directory=/tmp/run. Progress goes to stderr, one line per epoch; the summary goes to
// stdout as "name: value" lines with the C runner's printf formats (reproduced exactly by
// CFormat). Exit status: 0 on success, 1 on any error (its message on stderr), 2 on bad usage.
using System;
using System.Globalization;
using System.IO;
using System.Numerics;
using System.Text;
using TfTrain;

static class TftTrainYaml {
  const string Program = "tft_train_yaml_csharp";

  static int Failed(string what, TftException e) {
    Console.Error.WriteLine("{0}: {1}: {2}: {3}", Program, what, e.StatusName, e.Message);
    return 1;
  }

  static int ApplyOverride(Config config, string assignment) {
    int equals = assignment.IndexOf('=');
    if (equals <= 0) {
      Console.Error.WriteLine("{0}: expected KEY=VALUE, got \"{1}\"", Program, assignment);
      return 2;
    }
    if (equals >= 256) {
      Console.Error.WriteLine("{0}: key too long in \"{1}\"", Program, assignment);
      return 2;
    }
    try {
      config.Set(assignment.Substring(0, equals), assignment.Substring(equals + 1));
    } catch (TftException e) {
      return Failed("override", e);
    }
    return 0;
  }

  // The trainer, from the config, or with --memory from data.path's CSV (relative to the
  // config file's folder) read into record batches.
  static Trainer NewTrainer(Config config, string configPath, bool memory) {
    if (!memory) return new Trainer(config);
    string path = config.Get("data.path").Trim('"');
    if (path.Length == 0 || path == "null" || path == "~") {
      throw new InvalidDataException("--memory needs data.path, the CSV file to read into memory");
    }
    path = Path.Combine(Path.GetDirectoryName(Path.GetFullPath(configPath)), path);
    using (var data = Data.FromRecordBatches(CsvTable.Load(path))) {
      return Trainer.FromData(config, data); // the trainer has its own copy of the rows
    }
  }

  static int Main(string[] args) {
    bool memory = args.Length > 0 && args[0] == "--memory";
    if (memory) {
      var rest = new string[args.Length - 1];
      Array.Copy(args, 1, rest, 0, rest.Length);
      args = rest;
    }
    if (args.Length < 1 || args[0] == "-h" || args[0] == "--help") {
      Console.Error.WriteLine("usage: {0} [--memory] CONFIG.yaml [KEY=VALUE ...]", Program);
      return 2;
    }
    Config config;
    try {
      config = Config.Load(args[0]);
    } catch (TftException e) {
      return Failed("config", e);
    }
    using (config) {
      for (int i = 1; i < args.Length; i++) {
        int code = ApplyOverride(config, args[i]);
        if (code != 0) return code;
      }
      try {
        config.Validate();
      } catch (TftException e) {
        return Failed("config", e);
      }
      Trainer trainer;
      try {
        trainer = NewTrainer(config, args[0], memory);
      } catch (TftException e) {
        return Failed("trainer", e);
      } catch (Exception e) when (e is IOException || e is UnauthorizedAccessException) {
        Console.Error.WriteLine("{0}: data: {1}", Program, e.Message);
        return 1;
      }
      using (trainer) {
        trainer.Progress = p => {
          if (p.Kind == ProgressKind.Epoch) {
            Console.Error.WriteLine("epoch {0}/{1}  train loss {2}  validation loss {3}  {4} samples/s",
                                    p.Epoch, p.Epochs, CFormat.F(p.TrainLoss, 6),
                                    CFormat.F(p.ValidationLoss, 6), CFormat.F(p.SamplesPerSecond, 0));
          }
          return false;
        };
        TrainReport r;
        try {
          r = trainer.Train();
        } catch (TftException e) {
          return Failed("training", e);
        }
        var o = new StringBuilder();
        o.Append("epochs_run: ").Append(r.EpochsRun).Append('\n');
        o.Append("best_epoch: ").Append(r.BestEpoch).Append('\n');
        o.Append("early_stopped: ").Append(r.EarlyStopped ? "true" : "false").Append('\n');
        o.Append("initial_validation_loss: ").Append(CFormat.G(r.InitialValidationLoss, 9)).Append('\n');
        o.Append("best_validation_loss: ").Append(CFormat.G(r.BestValidationLoss, 9)).Append('\n');
        o.Append("final_validation_loss: ").Append(CFormat.G(r.FinalValidationLoss, 9)).Append('\n');
        o.Append("final_train_loss: ").Append(CFormat.G(r.FinalTrainLoss, 9)).Append('\n');
        o.Append("q_risk_p50: ").Append(CFormat.G(r.Validation.QRiskP50, 9)).Append('\n');
        o.Append("q_risk_p90: ").Append(CFormat.G(r.Validation.QRiskP90, 9)).Append('\n');
        o.Append("samples_per_second: ").Append(CFormat.F(r.SamplesPerSecond, 1)).Append('\n');
        o.Append("peak_activation_bytes: ").Append(r.PeakActivationBytes).Append('\n');
        o.Append("memory_savings_measured: ").Append(CFormat.F(r.Memory.MeasuredSavings, 4)).Append('\n');
        o.Append("memory_savings_predicted: ").Append(CFormat.F(r.Memory.PredictedSavings, 4)).Append('\n');
        Console.Out.Write(o.ToString());
        Console.Out.Flush();
      }
    }
    return 0;
  }
}

/// <summary>C's printf "%.Nf" and "%.Ng" for doubles, exactly as glibc prints them: from the
/// exact decimal expansion of the double, rounded half to even.</summary>
static class CFormat {
  static string NonFinite(double x) {
    bool negative = BitConverter.DoubleToInt64Bits(x) < 0;
    if (double.IsNaN(x)) return negative ? "-nan" : "nan";
    if (double.IsInfinity(x)) return negative ? "-inf" : "inf";
    return null;
  }

  // |x| = 0.DIGITS * 10^point, exactly; DIGITS has no leading zeros ("" for zero).
  static string Exact(double x, out int point) {
    long bits = BitConverter.DoubleToInt64Bits(x) & long.MaxValue;
    int exponent = (int)(bits >> 52);
    long mantissa = bits & ((1L << 52) - 1);
    if (exponent == 0) exponent = 1; else mantissa |= 1L << 52;
    exponent -= 1075;
    if (mantissa == 0) {
      point = 1;
      return "";
    }
    BigInteger n;
    int decimals;
    if (exponent >= 0) {
      n = new BigInteger(mantissa) << exponent;
      decimals = 0;
    } else {
      n = new BigInteger(mantissa) * BigInteger.Pow(5, -exponent);
      decimals = -exponent;
    }
    string digits = n.ToString(CultureInfo.InvariantCulture);
    point = digits.Length - decimals;
    return digits;
  }

  // Rounds 0.DIGITS * 10^point to `keep` digits (keep may be <= 0), half to even; returns
  // exactly max(keep, 0) digits and updates point when a carry adds a digit.
  static string Round(string digits, ref int point, int keep) {
    if (keep < 0) return "";
    if (digits.Length <= keep) return digits.PadRight(keep, '0');
    string kept = digits.Substring(0, keep);
    char first = digits[keep];
    bool up;
    if (first > '5') {
      up = true;
    } else if (first < '5') {
      up = false;
    } else {
      bool more = digits.IndexOfAny("123456789".ToCharArray(), keep + 1) >= 0;
      int last = keep > 0 ? kept[keep - 1] - '0' : 0;
      up = more || last % 2 == 1;
    }
    if (!up) return kept;
    string bumped = (kept.Length == 0 ? BigInteger.One : BigInteger.Parse(kept) + 1)
                        .ToString(CultureInfo.InvariantCulture);
    if (bumped.Length > keep) {
      point++;
      bumped = bumped.Substring(0, keep);
      if (keep == 0) return "";
    }
    return bumped.PadLeft(keep, '0');
  }

  static string Fixed(string digits, int point, int decimals) {
    // digits are the value's digits down to 10^-decimals; point as in Exact.
    string integer, fraction;
    if (point > 0) {
      string all = digits.PadRight(point + decimals, '0');
      integer = all.Substring(0, point);
      fraction = all.Substring(point, decimals);
    } else {
      integer = "0";
      fraction = (new string('0', -point) + digits).PadRight(decimals, '0').Substring(0, decimals);
    }
    integer = integer.TrimStart('0');
    if (integer.Length == 0) integer = "0";
    return decimals > 0 ? integer + "." + fraction : integer;
  }

  /// <summary>printf("%.<decimals>f", x).</summary>
  public static string F(double x, int decimals) {
    string special = NonFinite(x);
    if (special != null) return special;
    string sign = BitConverter.DoubleToInt64Bits(x) < 0 ? "-" : "";
    int point;
    string digits = Exact(x, out point);
    if (digits.Length == 0) return sign + Fixed("", 1, decimals);
    int keep = point + decimals;
    string rounded = Round(digits, ref point, keep);
    if (keep <= 0 && rounded.Length == 0) {
      // Everything was rounded: 0 or one unit in the last place.
      bool up = keep == 0 && (digits[0] > '5' || (digits[0] == '5' &&
                                                   digits.IndexOfAny("123456789".ToCharArray(), 1) >= 0));
      if (!up) return sign + Fixed("", 1, decimals);
      return sign + Fixed("1", 1 - decimals, decimals);
    }
    return sign + Fixed(rounded, point, decimals);
  }

  /// <summary>printf("%.<precision>g", x).</summary>
  public static string G(double x, int precision) {
    string special = NonFinite(x);
    if (special != null) return special;
    if (precision == 0) precision = 1;
    string sign = BitConverter.DoubleToInt64Bits(x) < 0 ? "-" : "";
    int point;
    string digits = Exact(x, out point);
    if (digits.Length == 0) return sign + "0";
    string rounded = Round(digits, ref point, precision);
    int exponent = point - 1;
    string text;
    if (exponent < -4 || exponent >= precision) {
      string mantissa = rounded.Substring(0, 1);
      string rest = rounded.Substring(1).TrimEnd('0');
      if (rest.Length > 0) mantissa += "." + rest;
      int e = Math.Abs(exponent);
      text = mantissa + "e" + (exponent < 0 ? "-" : "+") + (e < 10 ? "0" : "") +
             e.ToString(CultureInfo.InvariantCulture);
    } else {
      text = Fixed(rounded, point, precision - 1 - exponent);
      if (text.Contains(".")) text = text.TrimEnd('0').TrimEnd('.');
    }
    return sign + text;
  }
}

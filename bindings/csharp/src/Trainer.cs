using System;
using System.Runtime.ExceptionServices;

namespace TfTrain {

public enum ProgressKind { Step = 0, Epoch = 1 }

/// <summary>What the progress callback receives (tft_progress).</summary>
public sealed class Progress {
  public ProgressKind Kind { get; internal set; }
  public long Epoch { get; internal set; }          // 1-based
  public long Epochs { get; internal set; }
  public long Step { get; internal set; }           // 1-based within the epoch
  public long StepsPerEpoch { get; internal set; }
  public double TrainLoss { get; internal set; }
  public double ValidationLoss { get; internal set; } // Epoch records only; NaN otherwise
  public double SamplesPerSecond { get; internal set; }
  public long PeakActivationBytes { get; internal set; }
  public double LearningRate { get; internal set; }
  public long Fold { get; internal set; }  // BacktestReport.Run: the fold training (1-based); 0 in a Trainer
  public long Folds { get; internal set; } // BacktestReport.Run: backtest.folds; 0 in a Trainer

  // A copy of the record the library lends the callback (valid during the call only).
  internal static Progress From(IntPtr pointer) {
    var p = new Swig.Progress(pointer, false);
    return new Progress {
      Kind = (ProgressKind)(int)p.kind, Epoch = p.epoch, Epochs = p.epochs, Step = p.step,
      StepsPerEpoch = p.steps_per_epoch, TrainLoss = p.train_loss,
      ValidationLoss = p.validation_loss, SamplesPerSecond = p.samples_per_second,
      PeakActivationBytes = p.peak_activation_bytes, LearningRate = p.learning_rate,
      Fold = p.fold, Folds = p.folds };
  }
}

/// <summary>Forecast quality of a set of windows (tft_metrics).</summary>
public sealed class Metrics {
  public double Loss { get; internal set; }
  public double QRiskP50 { get; internal set; }
  public double QRiskP90 { get; internal set; }
  public double MaeP50 { get; internal set; }
  public long Windows { get; internal set; }

  internal static Metrics From(Swig.Metrics m) {
    return new Metrics { Loss = m.loss, QRiskP50 = m.q_risk_p50, QRiskP90 = m.q_risk_p90,
                         MaeP50 = m.mae_p50, Windows = m.windows };
  }
}

/// <summary>One training step's activation memory (tft_memory_report).</summary>
public sealed class MemoryReport {
  public long CheckpointedPeakBytes { get; internal set; }
  public long UncheckedPeakBytes { get; internal set; }
  public double MeasuredSavings { get; internal set; }
  public double PredictedSavings { get; internal set; }
  public double PredictedComputeOverhead { get; internal set; }
  public long NumUnits { get; internal set; }

  internal static MemoryReport From(Swig.MemoryReport m) {
    return new MemoryReport {
      CheckpointedPeakBytes = m.checkpointed_peak_bytes, UncheckedPeakBytes = m.unchecked_peak_bytes,
      MeasuredSavings = m.measured_savings, PredictedSavings = m.predicted_savings,
      PredictedComputeOverhead = m.predicted_compute_overhead, NumUnits = (long)m.num_units };
  }
}

/// <summary>How a training run ended: tft_train_report's summary (tft_train_summary),
/// validation metrics and memory report, read through tft_train_report_get_*.</summary>
public sealed class TrainReport {
  public long EpochsRun { get; internal set; }
  public long BestEpoch { get; internal set; }
  public long ResumedFromEpoch { get; internal set; }
  public bool EarlyStopped { get; internal set; }
  public double InitialValidationLoss { get; internal set; }
  public double BestValidationLoss { get; internal set; }
  public double FinalValidationLoss { get; internal set; }
  public double FinalTrainLoss { get; internal set; }
  public Metrics Validation { get; internal set; }
  public double TrainSeconds { get; internal set; }
  public double SamplesPerSecond { get; internal set; }
  public long PeakActivationBytes { get; internal set; }
  public MemoryReport Memory { get; internal set; }

  internal static TrainReport From(Swig.TrainReport report) {
    using (var s = new Swig.TrainSummary())
    using (var v = new Swig.Metrics())
    using (var m = new Swig.MemoryReport()) {
      report.GetSummary(s);
      report.GetValidation(v);
      report.GetMemory(m);
      return new TrainReport {
        EpochsRun = s.epochs_run, BestEpoch = s.best_epoch,
        ResumedFromEpoch = s.resumed_from_epoch, EarlyStopped = s.early_stopped != 0,
        InitialValidationLoss = s.initial_validation_loss,
        BestValidationLoss = s.best_validation_loss,
        FinalValidationLoss = s.final_validation_loss,
        FinalTrainLoss = s.final_train_loss, Validation = Metrics.From(v),
        TrainSeconds = s.train_seconds, SamplesPerSecond = s.samples_per_second,
        PeakActivationBytes = s.peak_activation_bytes, Memory = MemoryReport.From(m) };
    }
  }
}

/// <summary>Trains one model (tft_trainer). Dispose it when done.
/// While Train or Resume runs, only Cancel and Dispose may be called (from the progress
/// callback or another thread); other members throw InvalidOperationException then. Dispose
/// during training cancels it and releases the trainer when Train returns.</summary>
public sealed class Trainer : IDisposable {
  readonly object gate = new object(); // guards the fields below
  Swig.Trainer raw;
  bool running;
  Swig.Trainer disposePending;
  Func<Progress, bool> progress;
#pragma warning disable 414 // written only: the field keeps the delegate alive
  NativeProgressCallback native; // while the library holds it
#pragma warning restore 414
  Exception callbackException;

  /// <summary>Reads the data, builds the model; the config is copied.</summary>
  public Trainer(Config config) {
    if (config == null) throw new ArgumentNullException("config");
    raw = new Swig.Trainer(config.Raw);
  }

  Trainer(Swig.Trainer raw) { this.raw = raw; }

  /// <summary>Builds the trainer from data in memory instead of data.path
  /// (tft_trainer_create_from_data); the config is copied, the data only read during the
  /// call. A configured column missing from the data, or of a type the library does not
  /// take, is a TftException with Status.Data.</summary>
  public static Trainer FromData(Config config, Data data) {
    if (config == null) throw new ArgumentNullException("config");
    if (data == null) throw new ArgumentNullException("data");
    return new Trainer(Swig.Trainer.CreateFromData(config.Raw, data.Raw));
  }

  // The open, idle trainer; call with the gate held.
  Swig.Trainer Idle() {
    if (raw == null) throw new ObjectDisposedException("Trainer");
    if (running) {
      throw new InvalidOperationException(
          "Trainer is training: only Cancel and Dispose may be called until Train returns");
    }
    return raw;
  }

  /// <summary>Called after every step and every epoch on the thread running Train; return
  /// true to cancel training (Train then throws TftException with Status.Cancelled). An
  /// exception thrown by the callback cancels training and is rethrown by Train. null
  /// clears it.</summary>
  public Func<Progress, bool> Progress {
    get { return progress; }
    set {
      lock (gate) {
        var r = Idle();
        if (value == null) {
          r.ClearProgress();
          native = null;
        } else {
          var callback = new NativeProgressCallback(OnProgress);
          r.SetProgress(callback);
          native = callback;
        }
        progress = value;
      }
    }
  }

  int OnProgress(IntPtr pointer, IntPtr user) {
    try {
      var handler = progress;
      if (handler == null) return 0;
      return handler(TfTrain.Progress.From(pointer)) ? 1 : 0;
    } catch (Exception e) {
      // Never let an exception unwind through the native frames.
      callbackException = e;
      return 1;
    }
  }

  TrainReport Run(bool resume) {
    Swig.Trainer r;
    lock (gate) {
      r = Idle();
      running = true;
      callbackException = null;
    }
    Swig.TrainReport report;
    try {
      report = resume ? r.Resume() : r.Train();
    } catch (TftException) {
      var e = callbackException;
      callbackException = null;
      if (e != null) ExceptionDispatchInfo.Capture(e).Throw();
      throw;
    } finally {
      lock (gate) {
        running = false;
        if (disposePending != null) {
          disposePending.Dispose();
          disposePending = null;
          native = null;
          progress = null;
        }
      }
      GC.KeepAlive(this); // keeps the delegate alive until the native call returns
    }
    using (report) return TrainReport.From(report);
  }

  /// <summary>Trains from the initial weights, keeps the best epoch's weights and writes the
  /// run's files to output.directory.</summary>
  public TrainReport Train() { return Run(false); }

  /// <summary>Continues from the snapshot of an earlier run with this output.directory.</summary>
  public TrainReport Resume() { return Run(true); }

  /// <summary>Asks a running Train to stop at the next step; safe from any thread (and from
  /// the progress callback) until the trainer is disposed.</summary>
  public void Cancel() {
    lock (gate) {
      if (raw == null) throw new ObjectDisposedException("Trainer");
      raw.Cancel();
    }
  }

  /// <summary>The current weights on the validation windows.</summary>
  public Metrics Evaluate() {
    lock (gate) {
      using (var m = new Swig.Metrics()) {
        Idle().Evaluate(m);
        return Metrics.From(m);
      }
    }
  }

  /// <summary>One training step's activation peak, checkpointed and not.</summary>
  public MemoryReport MeasureMemory() {
    lock (gate) {
      using (var m = new Swig.MemoryReport()) {
        Idle().MeasureMemory(m);
        return MemoryReport.From(m);
      }
    }
  }

  public Predictions Predict() {
    lock (gate) return new Predictions(Idle().Predict());
  }

  /// <summary>Forecasts data in memory, laid out like the training data.</summary>
  public Predictions PredictData(Data data) {
    if (data == null) throw new ArgumentNullException("data");
    lock (gate) return new Predictions(Idle().PredictData(data.Raw));
  }

  public void PredictCsv(string path) {
    Library.Text("path", path);
    lock (gate) Idle().PredictCsv(path);
  }

  /// <summary>Writes the current weights as a model folder; null: output.directory/model.</summary>
  public void Save(string directory = null) {
    if (directory != null) Library.Text("directory", directory);
    lock (gate) Idle().Save(directory ?? "");
  }

  /// <summary>Releases the trainer; a second call does nothing. During training it cancels
  /// the training, and the trainer is released when Train returns.</summary>
  public void Dispose() {
    lock (gate) {
      var r = raw;
      raw = null;
      if (r == null) return;
      if (running) {
        try {
          r.Cancel();
        } catch (TftException) {
          // nothing more to do: the trainer is released when Train returns
        }
        disposePending = r;
        return;
      }
      r.Dispose();
      native = null;
      progress = null;
    }
  }
}

}

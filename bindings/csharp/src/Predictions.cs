using System;
using System.Collections.Generic;
using System.Runtime.InteropServices;

namespace TfTrain {

/// <summary>One forecast's description (tft_forecast_info).</summary>
public sealed class ForecastInfo {
  public long Series { get; internal set; }
  public long Origin { get; internal set; }   // integer time, or microseconds since 1970
  public bool IsFuture { get; internal set; } // the window after the data (actuals NaN)
}

/// <summary>Forecasts: the validation windows in order, then one window after the data per
/// series, in original units (tft_predictions).</summary>
public sealed class Predictions : IDisposable {
  Swig.Predictions raw;

  internal Predictions(Swig.Predictions raw) { this.raw = raw; }

  Swig.Predictions Raw {
    get {
      if (raw == null) throw new ObjectDisposedException("Predictions");
      return raw;
    }
  }

  public long Forecasts { get { return (long)Raw.GetForecastCount(); } }
  public long Horizon { get { return (long)Raw.GetHorizon(); } }
  public long QuantileCount { get { return (long)Raw.GetQuantileCount(); } }

  public double[] Quantiles() {
    var r = Raw;
    var levels = new double[r.GetQuantileCount()];
    for (int i = 0; i < levels.Length; i++) levels[i] = r.GetQuantile((ulong)i);
    return levels;
  }

  public ForecastInfo Info(long index) {
    using (var info = new Swig.ForecastInfo()) {
      Raw.GetForecastInfo(Library.Count("index", index), info);
      return new ForecastInfo { Series = (long)info.series, Origin = info.origin,
                                IsFuture = info.is_future != 0 };
    }
  }

  public string SeriesName(long series) { return Raw.GetSeriesName(Library.Count("series", series)); }

  static float[] Copy(Swig.FloatArray a) {
    using (a) {
      var v = new float[a.Count()];
      for (int i = 0; i < v.Length; i++) v[i] = a.Get((ulong)i);
      return v;
    }
  }

  /// <summary>[forecasts x horizon x quantiles], row-major.</summary>
  public float[] Values() { return Copy(Raw.GetValues()); }

  /// <summary>[forecasts x horizon] (NaN: unknown).</summary>
  public float[] Actuals() { return Copy(Raw.GetActuals()); }

  /// <summary>[forecasts x horizon], the forecast steps' times.</summary>
  public long[] Times() {
    using (var a = Raw.GetTimes()) {
      var v = new long[a.Count()];
      for (int i = 0; i < v.Length; i++) v[i] = a.Get((ulong)i);
      return v;
    }
  }

  public void WriteCsv(string path) {
    Raw.WriteCsv(Library.Text("path", path));
  }

  /// <summary>Fills the ArrowArrayStream at `stream` (a C struct the caller allocated) with the
  /// forecasts (tft_predictions_to_arrow_stream); the caller owns it and calls its release
  /// once, e.g. through Apache.Arrow.C's CArrowArrayStreamImporter.</summary>
  public void ToArrowStream(IntPtr stream) {
    if (stream == IntPtr.Zero) throw new ArgumentNullException("stream");
    Raw.ToArrowStream((ulong)stream.ToInt64());
  }

  /// <summary>The forecasts as record batches with forecast.csv's columns, typed: kind and the
  /// series columns strings, origin and time Int64Column, Date32Column or TimestampColumn,
  /// horizon Int64Column, one DoubleColumn per quantile ("q0.1", ...) and actual (DoubleColumn,
  /// null where unknown). Managed copies: independent of this object.</summary>
  public IList<Arrow.RecordBatch> ToRecordBatches() {
    unsafe {
      var stream = (Arrow.CArrowArrayStream*)Marshal.AllocHGlobal(sizeof(Arrow.CArrowArrayStream));
      try {
        *stream = default(Arrow.CArrowArrayStream);
        ToArrowStream((IntPtr)stream);
        return Arrow.ArrowImport.ReadStream(stream).AsReadOnly();
      } finally {
        Marshal.FreeHGlobal((IntPtr)stream);
      }
    }
  }

  public void Dispose() {
    var r = raw;
    raw = null;
    if (r != null) r.Dispose();
  }
}

/// <summary>A saved model folder (tft_model).</summary>
public sealed class Model : IDisposable {
  Swig.Model raw;

  public Model(string directory) {
    raw = new Swig.Model(Library.Text("directory", directory));
  }

  /// <summary>Forecasts a CSV laid out like the training data; null: the training data.</summary>
  public Predictions Predict(string csvPath = null) {
    if (raw == null) throw new ObjectDisposedException("Model");
    if (csvPath != null) Library.Text("csvPath", csvPath);
    return new Predictions(raw.Predict(csvPath ?? ""));
  }

  /// <summary>Forecasts data in memory, laid out like the training data.</summary>
  public Predictions PredictData(Data data) {
    if (raw == null) throw new ObjectDisposedException("Model");
    if (data == null) throw new ArgumentNullException("data");
    return new Predictions(raw.PredictData(data.Raw));
  }

  public void Dispose() {
    var r = raw;
    raw = null;
    if (r != null) r.Dispose();
  }
}

}

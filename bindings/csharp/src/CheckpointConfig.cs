using System;

namespace TfTrain {

/// <summary>The checkpointing strategy (tft_checkpoint_strategy).</summary>
public enum CheckpointStrategy { None = 0, Uniform = 1, Selective = 2, Dynamic = 3 }

/// <summary>Which units of the model recompute their activations in backward
/// (tft_checkpoint_config). Dispose it when done; use after Dispose throws
/// ObjectDisposedException.</summary>
public sealed class CheckpointConfig : IDisposable {
  Swig.CheckpointConfig raw;

  internal CheckpointConfig(Swig.CheckpointConfig raw) { this.raw = raw; }

  internal Swig.CheckpointConfig Raw {
    get {
      if (raw == null) throw new ObjectDisposedException("CheckpointConfig");
      return raw;
    }
  }

  /// <summary>Checkpoints nothing.</summary>
  public static CheckpointConfig None() { return new CheckpointConfig(new Swig.CheckpointConfig()); }

  /// <summary>Checkpoints every interval-th unit (0 is accepted but fails Validate).</summary>
  public static CheckpointConfig Uniform(long interval) {
    return new CheckpointConfig(Swig.CheckpointConfig.CreateUniform(Library.Count("interval", interval)));
  }

  /// <summary>Checkpoints the listed units (duplicates fail Validate).</summary>
  public static CheckpointConfig Selective(params long[] layers) {
    using (var list = new Swig.IndexList()) {
      foreach (long layer in layers ?? new long[0]) list.Add(Library.Count("layers", layer));
      return new CheckpointConfig(Swig.CheckpointConfig.CreateSelective(list));
    }
  }

  /// <summary>Checkpoints enough of numLayers units to keep memoryFraction of the
  /// activations (TftException Config: numLayers 0, memoryFraction outside [0, 1]).</summary>
  public static CheckpointConfig Dynamic(long numLayers, double memoryFraction) {
    return new CheckpointConfig(
        Swig.CheckpointConfig.CreateDynamic(Library.Count("numLayers", numLayers), memoryFraction));
  }

  /// <summary>Parses the checkpoint section's YAML text.</summary>
  public static CheckpointConfig FromYaml(string yaml) {
    return new CheckpointConfig(Swig.CheckpointConfig.CreateFromYaml(Library.Text("yaml", yaml)));
  }

  /// <summary>Parses the checkpoint section's JSON text.</summary>
  public static CheckpointConfig FromJson(string json) {
    return new CheckpointConfig(Swig.CheckpointConfig.CreateFromJson(Library.Text("json", json)));
  }

  public CheckpointConfig Clone() { return new CheckpointConfig(Raw.Clone()); }

  public CheckpointStrategy Strategy { get { return (CheckpointStrategy)Raw.GetStrategy(); } }

  /// <summary>Whether attention sub-layers are checkpointed.</summary>
  public bool CheckpointAttention {
    get { return Raw.GetCheckpointAttention(); }
    set { Raw.SetCheckpointAttention(value); }
  }

  /// <summary>Whether position-wise feed-forward sub-layers are checkpointed.</summary>
  public bool CheckpointFfn {
    get { return Raw.GetCheckpointFfn(); }
    set { Raw.SetCheckpointFfn(value); }
  }

  /// <summary>The minimum checkpoint interval (0 is stored but fails Validate).</summary>
  public long MinInterval {
    get { return (long)Raw.GetMinInterval(); }
    set { Raw.SetMinInterval(Library.Count("MinInterval", value)); }
  }

  public bool ShouldCheckpoint(long layer) {
    return Raw.GetShouldCheckpoint(Library.Count("layer", layer));
  }

  public double MemorySavings(long numLayers) {
    return Raw.GetMemorySavings(Library.Count("numLayers", numLayers));
  }

  public double ComputeOverhead(long numLayers) {
    return Raw.GetComputeOverhead(Library.Count("numLayers", numLayers));
  }

  /// <summary>Throws TftException (Config) naming the broken rule.</summary>
  public void Validate() { Raw.Validate(); }

  /// <summary>"Uniform checkpointing every 2 layers".</summary>
  public string Summary() { return Raw.GetSummary(); }

  public string ToYaml() { return Raw.ToYaml(); }

  public string ToJson() { return Raw.ToJson(); }

  public override string ToString() { return raw == null ? "CheckpointConfig(disposed)" : Summary(); }

  /// <summary>Releases the native object; a second call does nothing.</summary>
  public void Dispose() {
    var r = raw;
    raw = null;
    if (r != null) r.Dispose();
  }
}

}

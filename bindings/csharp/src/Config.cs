using System;

namespace TfTrain {

/// <summary>A training configuration (tft_config): one YAML file, every key in
/// docs/config.md.</summary>
public sealed class Config : IDisposable {
  Swig.Config raw;

  Config(Swig.Config raw) { this.raw = raw; }

  internal Swig.Config Raw {
    get {
      if (raw == null) throw new ObjectDisposedException("Config");
      return raw;
    }
  }

  /// <summary>Reads and validates a YAML file (relative paths resolve against its
  /// folder).</summary>
  public static Config Load(string path) {
    return new Config(Swig.Config.CreateFromFile(Library.Text("path", path)));
  }

  /// <summary>Reads and validates YAML text (relative paths stay relative to the working
  /// directory).</summary>
  public static Config Parse(string yaml) {
    return new Config(new Swig.Config(Library.Text("yaml", yaml)));
  }

  public Config Clone() { return new Config(Raw.Clone()); }

  /// <summary>The value at a dotted key ("training.epochs") as YAML text.</summary>
  public string Get(string key) {
    return Raw.GetValue(Library.Text("key", key));
  }

  /// <summary>Sets the value at a dotted key from YAML text; unchanged on error.</summary>
  public void Set(string key, string value) {
    Raw.SetValue(Library.Text("key", key), Library.Text("value", value));
  }

  /// <summary>The checkpoint section (a copy is stored; a copy is returned).</summary>
  public CheckpointConfig Checkpoint {
    get { return new CheckpointConfig(Raw.GetCheckpoint()); }
    set {
      if (value == null) throw new ArgumentNullException("value");
      Raw.SetCheckpoint(value.Raw);
    }
  }

  /// <summary>Throws TftException (Config) naming the first broken rule.</summary>
  public void Validate() { Raw.Validate(); }

  /// <summary>Every key, paths resolved.</summary>
  public string ToYaml() { return Raw.ToYaml(); }

  public void Dispose() {
    var r = raw;
    raw = null;
    if (r != null) r.Dispose();
  }
}

}

#include "model/model_config.h"

#include "common/error.h"
#include "model/segment.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <sstream>
#include <utility>

namespace tft {
namespace {

constexpr const char* kStaticEncoder = "static_encoder";
constexpr const char* kHistoricalEncoder = "historical_encoder";
constexpr const char* kFutureEncoder = "future_encoder";
constexpr const char* kLstmEncoder = "lstm_encoder";
constexpr const char* kLstmDecoder = "lstm_decoder";
constexpr const char* kAttentionPrefix = "attention_";

std::string number(double value) {
  std::ostringstream out;
  out << value;
  return out.str();
}

[[noreturn]] void fail(const std::string& message) { throw ConfigError(message); }

void require_positive(const char* field, std::int64_t value) {
  if (value < 1) {
    fail(std::string("model.") + field + ": must be at least 1 (got " + std::to_string(value) +
         ")");
  }
}

std::vector<std::string> names_of(const std::vector<CategoricalVariable>& variables) {
  std::vector<std::string> names;
  for (const auto& v : variables) names.push_back(v.name);
  return names;
}

template <typename T>
void append(std::vector<T>& to, const std::vector<T>& from) {
  to.insert(to.end(), from.begin(), from.end());
}

void validate_schema(const InputSchema& schema) {
  if (schema.target.empty()) {
    fail(
        "model.schema.target: is empty; name the variable to forecast (the schema needs at "
        "least a target)");
  }
  // Every name once across all groups: selection weights are reported by name.
  std::map<std::string, std::string> seen;  // name -> group it was first seen in
  auto claim = [&](const std::string& name, const std::string& where) {
    if (name.empty()) fail("model.schema." + where + ": variable name is empty");
    auto [it, inserted] = seen.emplace(name, where);
    if (!inserted) {
      fail("model.schema: duplicate variable name '" + name + "' (" + it->second + " and " + where +
           ")");
    }
  };
  claim(schema.target, "target");
  const std::pair<const char*, const std::vector<std::string>*> reals[] = {
      {"static_reals", &schema.static_reals},
      {"known_reals", &schema.known_reals},
      {"unknown_reals", &schema.unknown_reals}};
  for (const auto& [group, names] : reals) {
    for (std::size_t i = 0; i < names->size(); ++i) {
      claim((*names)[i], std::string(group) + "[" + std::to_string(i) + "]");
    }
  }
  const std::pair<const char*, const std::vector<CategoricalVariable>*> categoricals[] = {
      {"static_categoricals", &schema.static_categoricals},
      {"known_categoricals", &schema.known_categoricals},
      {"unknown_categoricals", &schema.unknown_categoricals}};
  for (const auto& [group, variables] : categoricals) {
    for (std::size_t i = 0; i < variables->size(); ++i) {
      const auto& v = (*variables)[i];
      const std::string where = std::string(group) + "[" + std::to_string(i) + "]";
      claim(v.name, where);
      if (v.cardinality < 1) {
        fail("model.schema." + where + " '" + v.name + "': cardinality must be at least 1 (got " +
             std::to_string(v.cardinality) + ")");
      }
      if (v.embedding_dim < 0) {
        fail("model.schema." + where + " '" + v.name +
             "': embedding_dim must be 0 (automatic) or positive (got " +
             std::to_string(v.embedding_dim) + ")");
      }
    }
  }
}

}  // namespace

std::vector<std::string> InputSchema::historical_reals() const {
  std::vector<std::string> names = unknown_reals;
  append(names, known_reals);
  names.push_back(target);
  return names;
}

std::vector<CategoricalVariable> InputSchema::historical_categoricals() const {
  std::vector<CategoricalVariable> variables = unknown_categoricals;
  append(variables, known_categoricals);
  return variables;
}

std::vector<std::string> InputSchema::static_variables() const {
  std::vector<std::string> names = static_reals;
  append(names, names_of(static_categoricals));
  return names;
}

std::vector<std::string> InputSchema::historical_variables() const {
  std::vector<std::string> names = historical_reals();
  append(names, names_of(historical_categoricals()));
  return names;
}

std::vector<std::string> InputSchema::future_variables() const {
  std::vector<std::string> names = known_reals;
  append(names, names_of(known_categoricals));
  return names;
}

std::int64_t embedding_dim_for(const CategoricalVariable& variable, std::int64_t hidden_size) {
  if (variable.embedding_dim > 0) return variable.embedding_dim;
  const auto automatic = static_cast<std::int64_t>(
      std::lround(1.6 * std::pow(static_cast<double>(variable.cardinality), 0.56)));
  return std::max<std::int64_t>(1, std::min(hidden_size, automatic));
}

void ModelConfig::validate() const {
  require_positive("hidden_size", hidden_size);
  require_positive("attention_heads", attention_heads);
  if (hidden_size % attention_heads != 0) {
    fail("model.hidden_size: " + std::to_string(hidden_size) +
         " is not divisible by model.attention_heads " + std::to_string(attention_heads));
  }
  if (!(dropout >= 0.0 && dropout < 1.0)) {
    fail("model.dropout: must be in [0, 1) (got " + number(dropout) + ")");
  }
  if (!(embedding_dropout >= 0.0 && embedding_dropout < 1.0)) {
    fail("model.embedding_dropout: must be in [0, 1) (got " + number(embedding_dropout) + ")");
  }
  if (quantization.enabled) {
    for (const auto& [field, bits] :
         {std::pair<const char*, std::int64_t>{"weight_bits", quantization.weight_bits},
          {"activation_bits", quantization.activation_bits}}) {
      if (bits < 2 || bits > 8) {
        fail(std::string("training.qat.") + field + ": must be in [2, 8] (got " +
             std::to_string(bits) + ")");
      }
    }
  }
  require_positive("lstm_layers", lstm_layers);
  require_positive("decoder_layers", decoder_layers);
  if (quantiles.empty()) fail("model.quantiles: must list at least one quantile");
  for (std::size_t i = 0; i < quantiles.size(); ++i) {
    const double q = quantiles[i];
    if (!(q > 0.0 && q < 1.0)) {
      fail("model.quantiles[" + std::to_string(i) + "]: must be in (0, 1) (got " + number(q) + ")");
    }
    if (i > 0 && !(q > quantiles[i - 1])) {
      fail("model.quantiles[" + std::to_string(i) + "]: must be strictly increasing (" + number(q) +
           " follows " + number(quantiles[i - 1]) + ")");
    }
  }
  require_positive("encoder_length", encoder_length);
  require_positive("prediction_length", prediction_length);
  validate_schema(schema);

  const auto units = unit_names();
  for (const auto& [unit, chunks] : unit_chunks) {
    if (std::find(units.begin(), units.end(), unit) == units.end()) {
      std::string known;
      for (const auto& u : units) known += (known.empty() ? "" : ", ") + u;
      fail("model.unit_chunks: unknown unit '" + unit + "' (units: " + known + ")");
    }
    if (chunks < 1) {
      fail("model.unit_chunks." + unit + ": must be at least 1 (got " + std::to_string(chunks) +
           ")");
    }
  }
}

std::vector<std::string> ModelConfig::unit_names() const {
  std::vector<std::string> names{kStaticEncoder, kHistoricalEncoder, kFutureEncoder, kLstmEncoder,
                                 kLstmDecoder};
  for (std::int64_t k = 0; k < decoder_layers; ++k) {
    names.push_back(kAttentionPrefix + std::to_string(k));
  }
  return names;
}

std::int64_t ModelConfig::chunked_steps(const std::string& unit) const {
  if (unit == kHistoricalEncoder || unit == kLstmEncoder) return encoder_length;
  if (unit == kFutureEncoder || unit == kLstmDecoder) return prediction_length;
  if (unit.rfind(kAttentionPrefix, 0) == 0) return encoder_length + prediction_length;
  return 0;
}

std::int64_t ModelConfig::chunks_for(const std::string& unit, std::int64_t batch_size) const {
  const auto it = unit_chunks.find(unit);
  if (it != unit_chunks.end()) return it->second;
  const std::int64_t most = default_unit_chunks(unit);
  const std::int64_t steps = chunked_steps(unit);
  if (steps == 0) return most;  // static_encoder: its chunks split the batch, kept whole
  const std::int64_t elements = std::max<std::int64_t>(batch_size, 1) * steps * hidden_size;
  return std::clamp<std::int64_t>(elements / std::max<std::int64_t>(min_chunk_elements, 1), 1,
                                  std::max<std::int64_t>(most, 1));
}

std::int64_t ModelConfig::default_unit_chunks(const std::string& unit) const {
  // The peak during a checkpointed backward is the kept chunk boundaries plus the largest
  // chunk being recomputed, so the chunk count of each unit follows its share of the
  // activations. Reference measurements: see the report of the model's checkpointing work.
  constexpr std::int64_t kEncoderChunks = 8;
  constexpr std::int64_t kMostDecoderChunks = 4;
  if (unit == kHistoricalEncoder || unit == kLstmEncoder) return kEncoderChunks;
  if (unit == kFutureEncoder || unit == kLstmDecoder) {
    // Chunks about as long as the encoder's, which are the largest. On the reference
    // configuration (168 and 24 steps) one chunk instead of four left full's peak at 56.8 MiB
    // and took 3,065 of its 22,217 calls away (BENCHMARKS.md, Operator calls).
    return chunks_as_long_as(prediction_length, encoder_length, kEncoderChunks, kMostDecoderChunks);
  }
  if (unit == kStaticEncoder) return 1;
  return 4;  // attention_k
}

const char* to_string(OutputInit init) {
  switch (init) {
    case OutputInit::Uniform: return "uniform";
    case OutputInit::Center: return "center";
  }
  return "uniform";
}

bool operator==(const QuantizationConfig& a, const QuantizationConfig& b) {
  return a.enabled == b.enabled && a.weight_bits == b.weight_bits &&
         a.activation_bits == b.activation_bits;
}
bool operator!=(const QuantizationConfig& a, const QuantizationConfig& b) { return !(a == b); }

}  // namespace tft

/* Data (tft_data_*) and the calls that take or give Arrow streams (included by tftrain.i).
 *
 * The Arrow C structs never reach the languages as SWIG classes: each language's own Arrow
 * library fills or reads them (arrow-go's cdata, Apache.Arrow.C), and its address crosses as
 * a 64-bit integer. Data takes the stream over as tft_data_create_from_arrow_stream says (on
 * return, in success and failure, the struct is marked released); Predictions.ToArrowStream
 * fills a struct the caller owns and releases. */

%extend tft_data {
  /* tft_data_create_from_arrow_stream: `stream_address` is a struct ArrowArrayStream*. */
  tft_data(uint64_t stream_address) {
    tft_data* out = NULL;
    tftswig_ok(tft_data_create_from_arrow_stream(
        (struct ArrowArrayStream*)(uintptr_t)stream_address, &out));
    return out;
  }
  ~tft_data() { tft_data_free($self); }
  int64_t GetNumRows() {
    int64_t n = 0;
    tftswig_ok(tft_data_get_num_rows($self, &n));
    return n;
  }
}

%extend tft_trainer {
  /* tft_trainer_create_from_data. */
  static tft_trainer* CreateFromData(const tft_config* config, const tft_data* data) {
    tft_trainer* out = NULL;
    tftswig_ok(tft_trainer_create_from_data(config, data, &out));
    return out;
  }
  tft_predictions* PredictData(const tft_data* data) {
    tft_predictions* out = NULL;
    tftswig_ok(tft_trainer_predict_data($self, data, &out));
    return out;
  }
}

%extend tft_model {
  tft_predictions* PredictData(const tft_data* data) {
    tft_predictions* out = NULL;
    tftswig_ok(tft_model_predict_data($self, data, &out));
    return out;
  }
}

%extend tft_predictions {
  /* tft_predictions_to_arrow_stream: `stream_address` is a struct ArrowArrayStream* the
   * caller provides; it owns the stream filled in and calls its release. */
  void ToArrowStream(uint64_t stream_address) {
    tftswig_ok(tft_predictions_to_arrow_stream(
        $self, (struct ArrowArrayStream*)(uintptr_t)stream_address));
  }
}

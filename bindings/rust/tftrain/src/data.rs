//! Data in memory: a table handed to the library as an Arrow C stream (`tft_data`), and
//! forecasts handed back as one.
use std::ptr::{self, NonNull};

use arrow_array::ffi_stream::{ArrowArrayStreamReader, FFI_ArrowArrayStream};
use arrow_array::RecordBatchReader;

use tftrain_sys as sys;

use crate::error::{check, Error, Result, Status};

/// A table in memory, laid out like a data file (one row per series and time step), read
/// whole from a [`RecordBatchReader`] (`tft_data`). Train from it with
/// [`Trainer::from_data`](crate::Trainer::from_data), forecast it with
/// [`Trainer::predict_data`](crate::Trainer::predict_data) or
/// [`Model::predict_data`](crate::Model::predict_data). Released on drop; trainers and
/// predictions made from it do not need it.
///
/// The configured columns are read with the Parquet reader's rules (docs/config.md): integers,
/// booleans, floats (NaN is missing), strings and dictionaries of them, dates and timestamps;
/// record batches of any sizes. A row is named by its 0-based index in the stream.
#[derive(Debug)]
pub struct Data {
    raw: NonNull<sys::tft_data>,
}

// SAFETY: the handle is not tied to a thread; it is read-only once created and every call
// that reads it borrows it.
unsafe impl Send for Data {}

/// The arrow-rs stream struct as the C API's (both are the spec's `#[repr(C)]` layout).
fn as_sys(stream: &mut FFI_ArrowArrayStream) -> *mut sys::ArrowArrayStream {
    (stream as *mut FFI_ArrowArrayStream).cast()
}

impl Data {
    /// Reads every record batch of `reader` into a new handle.
    ///
    /// Ownership: the reader is exported as an Arrow C stream (`FFI_ArrowArrayStream`) and
    /// moved into the library, which reads it and releases it, dropping the reader, exactly
    /// once before this returns, in success and failure alike; the batches' buffers are kept
    /// (not copied) until the handle and whatever reads it are done. Errors: Data (the reader
    /// failed: the message carries its error and the row its batch began at; no rows).
    pub fn from_reader<R>(reader: R) -> Result<Data>
    where
        R: RecordBatchReader + Send + 'static,
    {
        Data::from_boxed_reader(Box::new(reader))
    }

    /// The same for a boxed reader.
    pub fn from_boxed_reader(reader: Box<dyn RecordBatchReader + Send>) -> Result<Data> {
        let mut stream = FFI_ArrowArrayStream::new(reader);
        // SAFETY: a valid stream; the library takes it over (moves it out: release is NULL on
        // return), so the FFI_ArrowArrayStream dropped below releases nothing.
        unsafe { Data::from_raw_stream(as_sys(&mut stream)) }
    }

    /// Takes over any Arrow C stream (nanoarrow's, another library's), with the C API's move
    /// semantics: on return `stream.release` is NULL and the library has released it once.
    ///
    /// # Safety
    /// `stream` points to a valid `ArrowArrayStream` (released or not) that nothing else uses
    /// during the call.
    pub unsafe fn from_raw_stream(stream: *mut sys::ArrowArrayStream) -> Result<Data> {
        let mut out = ptr::null_mut();
        let code = unsafe { sys::tft_data_create_from_arrow_stream(stream, &mut out) };
        debug_assert!(stream.is_null() || unsafe { (*stream).release.is_none() });
        check(code)?;
        NonNull::new(out)
            .map(|raw| Data { raw })
            .ok_or_else(|| Error::new(Status::Internal, "the library returned no data"))
    }

    pub(crate) fn as_ptr(&self) -> *const sys::tft_data {
        self.raw.as_ptr()
    }

    /// The number of rows the stream held.
    pub fn num_rows(&self) -> Result<u64> {
        let mut rows = 0i64;
        check(unsafe { sys::tft_data_get_num_rows(self.raw.as_ptr(), &mut rows) })?;
        Ok(rows as u64)
    }

    /// Releases the handle now (the same as dropping it).
    pub fn close(self) {}
}

impl Drop for Data {
    fn drop(&mut self) {
        unsafe { sys::tft_data_free(self.raw.as_ptr()) }
    }
}

/// The forecasts of `predictions` as an Arrow stream the caller owns.
pub(crate) fn predictions_to_reader(
    predictions: *const sys::tft_predictions,
) -> Result<ArrowArrayStreamReader> {
    let mut stream = FFI_ArrowArrayStream::empty();
    // SAFETY: the library fills the caller's struct (untouched on failure: then `stream`
    // stays empty and its drop releases nothing); on success the reader below owns it and
    // calls its release once, on drop.
    check(unsafe { sys::tft_predictions_to_arrow_stream(predictions, as_sys(&mut stream)) })?;
    ArrowArrayStreamReader::try_new(stream).map_err(|e| {
        Error::new(
            Status::Internal,
            format!("the forecasts' Arrow stream: {e}"),
        )
    })
}

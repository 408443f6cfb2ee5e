use std::ffi::CStr;
use std::fmt;

use tftrain_sys as sys;

/// The category of a failure (the C API's `tft_status`, without `TFT_OK`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Status {
    InvalidArgument,
    Config,
    Data,
    Io,
    Numerical,
    Cancelled,
    Unsupported,
    Internal,
    BufferTooSmall,
    OutOfMemory,
}

impl Status {
    /// The C status code.
    pub fn code(self) -> i32 {
        match self {
            Status::InvalidArgument => sys::TFT_ERROR_INVALID_ARGUMENT,
            Status::Config => sys::TFT_ERROR_CONFIG,
            Status::Data => sys::TFT_ERROR_DATA,
            Status::Io => sys::TFT_ERROR_IO,
            Status::Numerical => sys::TFT_ERROR_NUMERICAL,
            Status::Cancelled => sys::TFT_ERROR_CANCELLED,
            Status::Unsupported => sys::TFT_ERROR_UNSUPPORTED,
            Status::Internal => sys::TFT_ERROR_INTERNAL,
            Status::BufferTooSmall => sys::TFT_ERROR_BUFFER_TOO_SMALL,
            Status::OutOfMemory => sys::TFT_ERROR_OUT_OF_MEMORY,
        }
    }

    /// The status of a C code; unknown codes are `Internal`.
    pub fn from_code(code: i32) -> Status {
        match code {
            sys::TFT_ERROR_INVALID_ARGUMENT => Status::InvalidArgument,
            sys::TFT_ERROR_CONFIG => Status::Config,
            sys::TFT_ERROR_DATA => Status::Data,
            sys::TFT_ERROR_IO => Status::Io,
            sys::TFT_ERROR_NUMERICAL => Status::Numerical,
            sys::TFT_ERROR_CANCELLED => Status::Cancelled,
            sys::TFT_ERROR_UNSUPPORTED => Status::Unsupported,
            sys::TFT_ERROR_BUFFER_TOO_SMALL => Status::BufferTooSmall,
            sys::TFT_ERROR_OUT_OF_MEMORY => Status::OutOfMemory,
            _ => Status::Internal,
        }
    }

    /// The library's name of the status, e.g. "ERROR_CONFIG".
    pub fn name(self) -> &'static str {
        // SAFETY: tft_status_name returns a static NUL-terminated string.
        let name = unsafe { CStr::from_ptr(sys::tft_status_name(self.code())) };
        name.to_str().unwrap_or("UNKNOWN")
    }
}

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A failure: the status and the library's message (`tft_last_error()`, read right after the
/// failing call on the same thread).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    status: Status,
    code: i32,
    message: String,
}

impl Error {
    pub(crate) fn new(status: Status, message: impl Into<String>) -> Error {
        Error {
            status,
            code: status.code(),
            message: message.into(),
        }
    }

    /// The error of a failed call: must run right after it, on the same thread.
    fn last(code: sys::tft_status) -> Error {
        // SAFETY: tft_last_error returns a NUL-terminated string valid until the next failing
        // call on this thread; it is copied at once.
        let message = unsafe { CStr::from_ptr(sys::tft_last_error()) }
            .to_string_lossy()
            .into_owned();
        Error {
            status: Status::from_code(code),
            code,
            message,
        }
    }

    pub fn status(&self) -> Status {
        self.status
    }

    /// The C status code as returned (also for codes this crate does not know).
    pub fn code(&self) -> i32 {
        self.code
    }

    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.status, self.message)
    }
}

impl std::error::Error for Error {}

/// Into std's I/O error, with std's kind where there is one: an allocation failure
/// (`Status::OutOfMemory`) becomes `io::ErrorKind::OutOfMemory`, so `?` into an `io::Result`
/// keeps it recognisable; the original error stays reachable through `get_ref()`.
impl From<Error> for std::io::Error {
    fn from(error: Error) -> std::io::Error {
        use std::io::ErrorKind;
        let kind = match error.status {
            Status::OutOfMemory => ErrorKind::OutOfMemory,
            Status::InvalidArgument | Status::Config => ErrorKind::InvalidInput,
            Status::Data | Status::Numerical => ErrorKind::InvalidData,
            Status::Cancelled => ErrorKind::Interrupted,
            Status::Unsupported => ErrorKind::Unsupported,
            _ => ErrorKind::Other,
        };
        std::io::Error::new(kind, error)
    }
}

pub type Result<T> = std::result::Result<T, Error>;

/// Turns a status into a Result, reading the message of a failure immediately.
pub(crate) fn check(code: sys::tft_status) -> Result<()> {
    if code == sys::TFT_OK {
        Ok(())
    } else {
        Err(Error::last(code))
    }
}

pub(crate) fn cstring(what: &str, text: &str) -> Result<std::ffi::CString> {
    std::ffi::CString::new(text).map_err(|_| {
        Error::new(
            Status::InvalidArgument,
            format!("{what} contains a NUL byte"),
        )
    })
}

pub(crate) fn cpath(path: &std::path::Path) -> Result<std::ffi::CString> {
    use std::os::unix::ffi::OsStrExt;
    std::ffi::CString::new(path.as_os_str().as_bytes()).map_err(|_| {
        Error::new(
            Status::InvalidArgument,
            format!("path {} contains a NUL byte", path.display()),
        )
    })
}

/// Reads a (buf, len, needed) string: a size query, then the copy.
pub(crate) fn read_string(
    mut f: impl FnMut(*mut std::ffi::c_char, usize, *mut usize) -> sys::tft_status,
) -> Result<String> {
    let mut needed = 0usize;
    check(f(std::ptr::null_mut(), 0, &mut needed))?;
    loop {
        let mut buf = vec![0u8; needed.max(1)];
        let len = buf.len();
        let code = f(buf.as_mut_ptr().cast(), len, &mut needed);
        if code == sys::TFT_ERROR_BUFFER_TOO_SMALL && needed > len {
            continue; // it grew in between
        }
        check(code)?;
        let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
        buf.truncate(end);
        return Ok(String::from_utf8_lossy(&buf).into_owned());
    }
}

/// Reads an (array, count, needed) array: a size query, then the copy.
pub(crate) fn read_array<T: Copy + Default>(
    mut f: impl FnMut(*mut T, usize, *mut usize) -> sys::tft_status,
) -> Result<Vec<T>> {
    let mut needed = 0usize;
    check(f(std::ptr::null_mut(), 0, &mut needed))?;
    loop {
        let mut items = vec![T::default(); needed];
        let count = items.len();
        let code = f(items.as_mut_ptr(), count, &mut needed);
        if code == sys::TFT_ERROR_BUFFER_TOO_SMALL && needed > count {
            continue;
        }
        check(code)?;
        return Ok(items);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn out_of_memory_is_stds_out_of_memory_kind() {
        let status = Status::from_code(sys::TFT_ERROR_OUT_OF_MEMORY);
        assert_eq!(status, Status::OutOfMemory);
        assert_eq!(status.code(), sys::TFT_ERROR_OUT_OF_MEMORY);
        let error = Error::new(status, "out of memory while training");
        let io: std::io::Error = error.clone().into();
        assert_eq!(io.kind(), std::io::ErrorKind::OutOfMemory);
        let inner = io.get_ref().and_then(|e| e.downcast_ref::<Error>());
        assert_eq!(inner, Some(&error));
        let config: std::io::Error = Error::new(Status::Config, "bad key").into();
        assert_eq!(config.kind(), std::io::ErrorKind::InvalidInput);
    }
}

//! The Arrow C Data Interface's structs, from the spec
//! (https://arrow.apache.org/docs/format/CDataInterface.html, CStreamInterface.html), as
//! capi/include/tftrain.h declares them. Any implementation's `#[repr(C)]` structs (arrow-rs's
//! `FFI_ArrowArrayStream`) have this layout: pass a pointer to one, cast.
use std::ffi::{c_char, c_int, c_void};

/// The Arrow C Data Interface's `struct ArrowSchema` (the spec's layout).
#[repr(C)]
#[derive(Debug)]
pub struct ArrowSchema {
    pub format: *const c_char,
    pub name: *const c_char,
    pub metadata: *const c_char,
    pub flags: i64,
    pub n_children: i64,
    pub children: *mut *mut ArrowSchema,
    pub dictionary: *mut ArrowSchema,
    pub release: Option<unsafe extern "C" fn(*mut ArrowSchema)>,
    pub private_data: *mut c_void,
}

/// The Arrow C Data Interface's `struct ArrowArray` (the spec's layout).
#[repr(C)]
#[derive(Debug)]
pub struct ArrowArray {
    pub length: i64,
    pub null_count: i64,
    pub offset: i64,
    pub n_buffers: i64,
    pub n_children: i64,
    pub buffers: *mut *const c_void,
    pub children: *mut *mut ArrowArray,
    pub dictionary: *mut ArrowArray,
    pub release: Option<unsafe extern "C" fn(*mut ArrowArray)>,
    pub private_data: *mut c_void,
}

/// The Arrow C stream interface's `struct ArrowArrayStream` (the spec's layout). `release`
/// None marks a released (or moved) stream.
#[repr(C)]
#[derive(Debug)]
pub struct ArrowArrayStream {
    pub get_schema:
        Option<unsafe extern "C" fn(stream: *mut ArrowArrayStream, out: *mut ArrowSchema) -> c_int>,
    pub get_next:
        Option<unsafe extern "C" fn(stream: *mut ArrowArrayStream, out: *mut ArrowArray) -> c_int>,
    pub get_last_error:
        Option<unsafe extern "C" fn(stream: *mut ArrowArrayStream) -> *const c_char>,
    pub release: Option<unsafe extern "C" fn(stream: *mut ArrowArrayStream)>,
    pub private_data: *mut c_void,
}

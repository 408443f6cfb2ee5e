use std::path::Path;
use std::ptr::{self, NonNull};

use tftrain_sys as sys;

use crate::checkpoint::CheckpointConfig;
use crate::error::{check, cpath, cstring, read_string, Error, Result, Status};

/// A training configuration (`tft_config`): one YAML file, every key in docs/config.md.
/// Released on drop.
#[derive(Debug)]
pub struct Config {
    raw: NonNull<sys::tft_config>,
}

// SAFETY: see CheckpointConfig.
unsafe impl Send for Config {}

fn made(code: sys::tft_status, out: *mut sys::tft_config) -> Result<Config> {
    check(code)?;
    NonNull::new(out)
        .map(|raw| Config { raw })
        .ok_or_else(|| Error::new(Status::Internal, "the library returned no handle"))
}

impl Config {
    /// Reads and validates a YAML file (relative paths resolve against its folder).
    pub fn load(path: impl AsRef<Path>) -> Result<Config> {
        let path = cpath(path.as_ref())?;
        let mut out = ptr::null_mut();
        made(
            unsafe { sys::tft_config_create_from_file(path.as_ptr(), &mut out) },
            out,
        )
    }

    /// Reads and validates YAML text (relative paths stay relative to the working directory).
    pub fn parse(yaml: &str) -> Result<Config> {
        let text = cstring("yaml", yaml)?;
        let mut out = ptr::null_mut();
        made(
            unsafe { sys::tft_config_create_from_yaml(text.as_ptr(), &mut out) },
            out,
        )
    }

    pub(crate) fn as_ptr(&self) -> *const sys::tft_config {
        self.raw.as_ptr()
    }

    pub fn try_clone(&self) -> Result<Config> {
        let mut out = ptr::null_mut();
        made(
            unsafe { sys::tft_config_clone(self.raw.as_ptr(), &mut out) },
            out,
        )
    }

    /// Releases the handle now (the same as dropping it).
    pub fn close(self) {}

    /// The value at a dotted key ("training.epochs") as YAML text ("20").
    pub fn get(&self, key: &str) -> Result<String> {
        let key = cstring("key", key)?;
        let raw = self.raw.as_ptr();
        read_string(|buf, len, needed| unsafe {
            sys::tft_config_get_value(raw, key.as_ptr(), buf, len, needed)
        })
    }

    /// Sets the value at a dotted key from YAML text ("64", "[0.1, 0.5, 0.9]"); unchanged on
    /// error. Call `validate` when done.
    pub fn set(&mut self, key: &str, value: &str) -> Result<()> {
        let key = cstring("key", key)?;
        let value = cstring("value", value)?;
        check(unsafe { sys::tft_config_set_value(self.raw.as_ptr(), key.as_ptr(), value.as_ptr()) })
    }

    /// Replaces the checkpoint section with a copy of `checkpoint`.
    pub fn set_checkpoint(&mut self, checkpoint: &CheckpointConfig) -> Result<()> {
        check(unsafe { sys::tft_config_set_checkpoint(self.raw.as_ptr(), checkpoint.as_ptr()) })
    }

    /// A copy of the checkpoint section.
    pub fn checkpoint(&self) -> Result<CheckpointConfig> {
        let mut out = ptr::null_mut();
        let code = unsafe { sys::tft_config_get_checkpoint(self.raw.as_ptr(), &mut out) };
        CheckpointConfig::from_raw(code, out)
    }

    /// A Config error naming the first broken rule, or Ok.
    pub fn validate(&self) -> Result<()> {
        check(unsafe { sys::tft_config_validate(self.raw.as_ptr()) })
    }

    /// Every key, paths resolved.
    pub fn to_yaml(&self) -> Result<String> {
        let raw = self.raw.as_ptr();
        read_string(|buf, len, needed| unsafe { sys::tft_config_to_yaml(raw, buf, len, needed) })
    }
}

impl Drop for Config {
    fn drop(&mut self) {
        unsafe { sys::tft_config_free(self.raw.as_ptr()) }
    }
}

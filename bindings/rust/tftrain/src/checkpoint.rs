use std::ptr::{self, NonNull};

use tftrain_sys as sys;

use crate::error::{check, cstring, read_string, Error, Result, Status};

/// The checkpointing strategy.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Strategy {
    None,
    Uniform,
    Selective,
    Dynamic,
}

/// Which units of the model recompute their activations in backward instead of storing them
/// (`tft_checkpoint_config`). Released on drop.
#[derive(Debug)]
pub struct CheckpointConfig {
    raw: NonNull<sys::tft_checkpoint_config>,
}

// SAFETY: a handle may be used from any thread, one at a time (&mut / & through ownership);
// the C API keeps no thread affinity. It is not Sync: concurrent reads are not promised.
unsafe impl Send for CheckpointConfig {}

fn made(code: sys::tft_status, out: *mut sys::tft_checkpoint_config) -> Result<CheckpointConfig> {
    check(code)?;
    NonNull::new(out)
        .map(|raw| CheckpointConfig { raw })
        .ok_or_else(|| Error::new(Status::Internal, "the library returned no handle"))
}

impl CheckpointConfig {
    /// Checkpoints nothing.
    pub fn none() -> Result<CheckpointConfig> {
        let mut out = ptr::null_mut();
        made(
            unsafe { sys::tft_checkpoint_config_create_none(&mut out) },
            out,
        )
    }

    /// Checkpoints every `interval`-th unit (0 is accepted but fails `validate`).
    pub fn uniform(interval: usize) -> Result<CheckpointConfig> {
        let mut out = ptr::null_mut();
        made(
            unsafe { sys::tft_checkpoint_config_create_uniform(interval, &mut out) },
            out,
        )
    }

    /// Checkpoints the listed units (duplicates fail `validate`).
    pub fn selective(layers: &[usize]) -> Result<CheckpointConfig> {
        let mut out = ptr::null_mut();
        let code = unsafe {
            sys::tft_checkpoint_config_create_selective(layers.as_ptr(), layers.len(), &mut out)
        };
        made(code, out)
    }

    /// Checkpoints enough of `num_layers` units to keep `memory_fraction` of the activations
    /// (Config error: `num_layers` 0, `memory_fraction` outside [0, 1] or NaN).
    pub fn dynamic(num_layers: usize, memory_fraction: f64) -> Result<CheckpointConfig> {
        let mut out = ptr::null_mut();
        made(
            unsafe {
                sys::tft_checkpoint_config_create_dynamic(num_layers, memory_fraction, &mut out)
            },
            out,
        )
    }

    /// Parses the checkpoint section's YAML text.
    pub fn from_yaml(yaml: &str) -> Result<CheckpointConfig> {
        let text = cstring("yaml", yaml)?;
        let mut out = ptr::null_mut();
        made(
            unsafe { sys::tft_checkpoint_config_create_from_yaml(text.as_ptr(), &mut out) },
            out,
        )
    }

    /// Parses the checkpoint section's JSON text.
    pub fn from_json(json: &str) -> Result<CheckpointConfig> {
        let text = cstring("json", json)?;
        let mut out = ptr::null_mut();
        made(
            unsafe { sys::tft_checkpoint_config_create_from_json(text.as_ptr(), &mut out) },
            out,
        )
    }

    pub(crate) fn from_raw(
        code: sys::tft_status,
        out: *mut sys::tft_checkpoint_config,
    ) -> Result<CheckpointConfig> {
        made(code, out)
    }

    pub(crate) fn as_ptr(&self) -> *const sys::tft_checkpoint_config {
        self.raw.as_ptr()
    }

    /// An independent copy.
    pub fn try_clone(&self) -> Result<CheckpointConfig> {
        let mut out = ptr::null_mut();
        made(
            unsafe { sys::tft_checkpoint_config_clone(self.raw.as_ptr(), &mut out) },
            out,
        )
    }

    /// Releases the handle now (the same as dropping it).
    pub fn close(self) {}

    pub fn set_checkpoint_attention(&mut self, enabled: bool) -> Result<()> {
        check(unsafe {
            sys::tft_checkpoint_config_set_checkpoint_attention(self.raw.as_ptr(), enabled.into())
        })
    }

    pub fn set_checkpoint_ffn(&mut self, enabled: bool) -> Result<()> {
        check(unsafe {
            sys::tft_checkpoint_config_set_checkpoint_ffn(self.raw.as_ptr(), enabled.into())
        })
    }

    /// 0 is stored but fails `validate`.
    pub fn set_min_interval(&mut self, interval: usize) -> Result<()> {
        check(unsafe { sys::tft_checkpoint_config_set_min_interval(self.raw.as_ptr(), interval) })
    }

    pub fn strategy(&self) -> Result<Strategy> {
        let mut out = sys::TFT_CHECKPOINT_NONE;
        check(unsafe { sys::tft_checkpoint_config_get_strategy(self.raw.as_ptr(), &mut out) })?;
        Ok(match out {
            sys::TFT_CHECKPOINT_UNIFORM => Strategy::Uniform,
            sys::TFT_CHECKPOINT_SELECTIVE => Strategy::Selective,
            sys::TFT_CHECKPOINT_DYNAMIC => Strategy::Dynamic,
            _ => Strategy::None,
        })
    }

    pub fn checkpoint_attention(&self) -> Result<bool> {
        let mut out = 0;
        check(unsafe {
            sys::tft_checkpoint_config_get_checkpoint_attention(self.raw.as_ptr(), &mut out)
        })?;
        Ok(out != 0)
    }

    pub fn checkpoint_ffn(&self) -> Result<bool> {
        let mut out = 0;
        check(unsafe {
            sys::tft_checkpoint_config_get_checkpoint_ffn(self.raw.as_ptr(), &mut out)
        })?;
        Ok(out != 0)
    }

    pub fn min_interval(&self) -> Result<usize> {
        let mut out = 0;
        check(unsafe { sys::tft_checkpoint_config_get_min_interval(self.raw.as_ptr(), &mut out) })?;
        Ok(out)
    }

    /// Whether unit `layer` is checkpointed (`tft_checkpoint_config_get_should_checkpoint`).
    pub fn should_checkpoint(&self, layer: usize) -> Result<bool> {
        let mut out = 0;
        check(unsafe {
            sys::tft_checkpoint_config_get_should_checkpoint(self.raw.as_ptr(), layer, &mut out)
        })?;
        Ok(out != 0)
    }

    /// The predicted fraction of activation memory saved for `num_layers` units.
    pub fn memory_savings(&self, num_layers: usize) -> Result<f64> {
        let mut out = 0.0;
        check(unsafe {
            sys::tft_checkpoint_config_get_memory_savings(self.raw.as_ptr(), num_layers, &mut out)
        })?;
        Ok(out)
    }

    /// The predicted compute factor (>= 1) for `num_layers` units.
    pub fn compute_overhead(&self, num_layers: usize) -> Result<f64> {
        let mut out = 0.0;
        check(unsafe {
            sys::tft_checkpoint_config_get_compute_overhead(self.raw.as_ptr(), num_layers, &mut out)
        })?;
        Ok(out)
    }

    /// A Config error naming the broken rule, or Ok.
    pub fn validate(&self) -> Result<()> {
        check(unsafe { sys::tft_checkpoint_config_validate(self.raw.as_ptr()) })
    }

    /// "Uniform checkpointing every 2 layers".
    pub fn summary(&self) -> Result<String> {
        let raw = self.raw.as_ptr();
        read_string(|buf, len, needed| unsafe {
            sys::tft_checkpoint_config_get_summary(raw, buf, len, needed)
        })
    }

    pub fn to_yaml(&self) -> Result<String> {
        let raw = self.raw.as_ptr();
        read_string(|buf, len, needed| unsafe {
            sys::tft_checkpoint_config_to_yaml(raw, buf, len, needed)
        })
    }

    pub fn to_json(&self) -> Result<String> {
        let raw = self.raw.as_ptr();
        read_string(|buf, len, needed| unsafe {
            sys::tft_checkpoint_config_to_json(raw, buf, len, needed)
        })
    }
}

impl Drop for CheckpointConfig {
    fn drop(&mut self) {
        unsafe { sys::tft_checkpoint_config_free(self.raw.as_ptr()) }
    }
}

//! Saving and loading named tensors (a model's parameters, an optimizer's state) in the `safetensors` format.
//!
//! Each tensor is stored in its own dtype (F32, F64, F16 or BF16). Loading goes into a module built on the target
//! device in the target dtype (a template): each parameter takes the saved values of its name, converted to the
//! template's dtype, on the template's device. A name missing from the file, one the file has that the module
//! does not, or a shape that differs, is an `Err` naming it; nothing is dropped or broadcast silently.
//!
//! A file may also carry [`Metadata`], text that a model needs besides its weights (a tokenizer's vocabulary, say):
//! [`save_with_metadata`] writes it, [`load_with_metadata`] returns it with the module.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;

use dispatch_core::{Backend, DType, Error, Result, Shape, Tensor};
use safetensors::tensor::{Dtype, TensorView};
use safetensors::{SafeTensors, serialize};

use crate::{Module, ModuleExt};

/// Text stored beside the tensors, by key (the safetensors header's `__metadata__`).
pub type Metadata = BTreeMap<String, String>;

/// `named` tensors as the bytes of a safetensors file.
pub fn to_bytes<B: Backend>(named: &[(String, Tensor<B>)]) -> Result<Vec<u8>> {
    to_bytes_with_metadata(named, &Metadata::new())
}

/// `named` tensors and `metadata` as the bytes of a safetensors file.
pub fn to_bytes_with_metadata<B: Backend>(named: &[(String, Tensor<B>)], metadata: &Metadata) -> Result<Vec<u8>> {
    let mut encoded = Vec::with_capacity(named.len());
    for (name, tensor) in named {
        let (dtype, bytes) = encode(tensor)?;
        encoded.push((name.clone(), dtype, tensor.dims(), bytes));
    }
    let views = encoded
        .iter()
        .map(|(name, dtype, dims, bytes)| {
            TensorView::new(*dtype, dims.clone(), bytes).map(|view| (name.clone(), view)).map_err(format_error("save"))
        })
        .collect::<Result<Vec<_>>>()?;
    // safetensors writes no metadata section for `None`, which reads back as an empty map as well.
    let metadata = (!metadata.is_empty())
        .then(|| metadata.iter().map(|(key, value)| (key.clone(), value.clone())).collect::<HashMap<_, _>>());
    serialize(views, metadata).map_err(format_error("save"))
}

/// The metadata of a safetensors file's bytes (empty when the file has none).
pub fn metadata_from_bytes(bytes: &[u8]) -> Result<Metadata> {
    let (_, header) = SafeTensors::read_metadata(bytes).map_err(format_error("load"))?;
    Ok(header.metadata().iter().flatten().map(|(key, value)| (key.clone(), value.clone())).collect())
}

/// Every tensor of a safetensors file, by name, as `B`'s tensors of the file's dtypes on `device`.
pub fn from_bytes<B: Backend>(bytes: &[u8], device: &B::Device) -> Result<Vec<(String, Tensor<B>)>> {
    let file = SafeTensors::deserialize(bytes).map_err(format_error("load"))?;
    let mut named = Vec::new();
    for (name, view) in file.tensors() {
        let (dtype, values) = decode(&view)?;
        named.push((name, Tensor::from_f64_vec(values, Shape::new(view.shape()), dtype, device)?));
    }
    Ok(named)
}

/// Saves every parameter of `module` to `path`.
pub fn save<B: Backend, M: ModuleExt<B>>(module: &M, path: impl AsRef<Path>) -> Result<()> {
    save_with_metadata(module, &Metadata::new(), path)
}

/// Saves every parameter of `module` and `metadata` to `path`.
pub fn save_with_metadata<B: Backend, M: ModuleExt<B>>(
    module: &M,
    metadata: &Metadata,
    path: impl AsRef<Path>,
) -> Result<()> {
    let bytes = to_bytes_with_metadata(&module.params()?, metadata)?;
    std::fs::write(path.as_ref(), bytes).map_err(file_error("save", path.as_ref()))
}

/// `template` with every parameter loaded from `path`; see the module's documentation for the rules.
pub fn load<B: Backend, M: Module<B>>(template: M, path: impl AsRef<Path>) -> Result<M> {
    let bytes = std::fs::read(path.as_ref()).map_err(file_error("load", path.as_ref()))?;
    load_bytes(template, &bytes)
}

/// [`load`], and the file's metadata (empty when it has none).
pub fn load_with_metadata<B: Backend, M: Module<B>>(template: M, path: impl AsRef<Path>) -> Result<(M, Metadata)> {
    let bytes = std::fs::read(path.as_ref()).map_err(file_error("load", path.as_ref()))?;
    Ok((load_bytes(template, &bytes)?, metadata_from_bytes(&bytes)?))
}

/// [`load`] from the bytes of a safetensors file.
pub fn load_bytes<B: Backend, M: Module<B>>(template: M, bytes: &[u8]) -> Result<M> {
    let file = SafeTensors::deserialize(bytes).map_err(format_error("load"))?;
    let mut unused: BTreeMap<String, ()> = file.names().into_iter().map(|name| (name.to_owned(), ())).collect();
    let module = template.map_params("", &mut |name: &str, param: Tensor<B>| {
        let view = file.tensor(name).map_err(|_| Error::RecordMismatch {
            op: "load",
            missing: vec![name.to_owned()],
            unexpected: Vec::new(),
        })?;
        unused.remove(name);
        let shape = Shape::new(view.shape());
        if shape != param.shape() {
            return Err(Error::ShapeMismatch { op: "load", lhs: param.shape(), rhs: shape });
        }
        let (dtype, values) = decode(&view)?;
        Tensor::from_f64_vec(values, shape, dtype, &param.device())?.cast(param.dtype())
    })?;
    if !unused.is_empty() {
        let unexpected = unused.into_keys().collect();
        return Err(Error::RecordMismatch { op: "load", missing: Vec::new(), unexpected });
    }
    Ok(module)
}

fn encode<B: Backend>(tensor: &Tensor<B>) -> Result<(Dtype, Vec<u8>)> {
    let values = tensor.to_f64_vec()?;
    let size = values.len().checked_mul(tensor.dtype().size_in_bytes());
    let mut bytes = Vec::new();
    size.and_then(|size| bytes.try_reserve_exact(size).ok())
        .ok_or(Error::OutOfMemory { op: "save", bytes: size.unwrap_or(usize::MAX) })?;
    let dtype = match tensor.dtype() {
        DType::F32 => {
            bytes.extend(values.iter().flat_map(|&value| (value as f32).to_le_bytes()));
            Dtype::F32
        }
        DType::F64 => {
            bytes.extend(values.iter().flat_map(|value| value.to_le_bytes()));
            Dtype::F64
        }
        DType::F16 => {
            bytes.extend(values.iter().flat_map(|&value| half::f16::from_f64(value).to_le_bytes()));
            Dtype::F16
        }
        DType::BF16 => {
            bytes.extend(values.iter().flat_map(|&value| half::bf16::from_f64(value).to_le_bytes()));
            Dtype::BF16
        }
    };
    Ok((dtype, bytes))
}

fn decode(view: &TensorView<'_>) -> Result<(DType, Vec<f64>)> {
    let data = view.data();
    let values: Vec<f64> = match view.dtype() {
        Dtype::F32 => data.chunks_exact(4).map(|b| f64::from(f32::from_le_bytes([b[0], b[1], b[2], b[3]]))).collect(),
        Dtype::F64 => data.chunks_exact(8).map(|b| f64::from_le_bytes(b.try_into().unwrap_or([0; 8]))).collect(),
        Dtype::F16 => data.chunks_exact(2).map(|b| half::f16::from_le_bytes([b[0], b[1]]).to_f64()).collect(),
        Dtype::BF16 => data.chunks_exact(2).map(|b| half::bf16::from_le_bytes([b[0], b[1]]).to_f64()).collect(),
        other => return Err(Error::UnsupportedDType { op: "load", backend: "safetensors", dtype: dtype_name(other) }),
    };
    let dtype = match view.dtype() {
        Dtype::F64 => DType::F64,
        Dtype::F16 => DType::F16,
        Dtype::BF16 => DType::BF16,
        _ => DType::F32,
    };
    Ok((dtype, values))
}

fn format_error(op: &'static str) -> impl Fn(safetensors::SafeTensorError) -> Error {
    move |error| Error::backend("safetensors", op, error)
}

fn file_error<'a>(op: &'static str, path: &'a Path) -> impl Fn(std::io::Error) -> Error + 'a {
    move |error| Error::Io { op, path: path.to_path_buf(), error }
}

/// The name of a safetensors dtype that does not load, as `'static` text for [`Error::UnsupportedDType`].
fn dtype_name(dtype: Dtype) -> &'static str {
    const NAMES: [&str; 18] = [
        "BOOL",
        "F4",
        "F6_E2M3",
        "F6_E3M2",
        "U8",
        "I8",
        "F8_E5M2",
        "F8_E4M3",
        "F8_E8M0",
        "F8_E4M3FNUZ",
        "F8_E5M2FNUZ",
        "I16",
        "U16",
        "I32",
        "U32",
        "C64",
        "I64",
        "U64",
    ];
    let name = dtype.to_string();
    NAMES.into_iter().find(|&known| known == name).unwrap_or("newer than this release")
}

#[cfg(all(test, feature = "ndarray"))]
mod tests {
    use dispatch_core::backends::{NdArray, NdArrayDevice};

    use super::*;

    fn weights(values: Vec<f64>) -> Tensor<NdArray> {
        Tensor::from_f64_vec(values, [3], DType::F32, &NdArrayDevice).unwrap()
    }

    #[test]
    fn metadata_saved_beside_the_weights_loads_back_with_them() {
        let metadata: Metadata = [("vocabulary", " !\"#ab\u{e9}\u{2192}"), ("format", "char-gpt")]
            .into_iter()
            .map(|(key, value)| (key.to_owned(), value.to_owned()))
            .collect();
        let path = std::env::temp_dir().join(format!("dispatch-nn-metadata-{}.safetensors", std::process::id()));
        save_with_metadata(&weights(vec![1.0, 2.0, 3.0]), &metadata, &path).unwrap();
        let (loaded, read) = load_with_metadata(weights(vec![0.0; 3]), &path).unwrap();
        // A plain `load` reads the weights of such a file too.
        let plain = load(weights(vec![0.0; 3]), &path).unwrap();
        std::fs::remove_file(&path).unwrap();
        assert_eq!(read, metadata);
        assert_eq!(loaded.to_f64_vec().unwrap(), [1.0, 2.0, 3.0]);
        assert_eq!(plain.to_f64_vec().unwrap(), [1.0, 2.0, 3.0]);
    }

    #[test]
    fn a_file_saved_without_metadata_has_an_empty_map_and_a_broken_file_is_an_error() {
        let bytes = to_bytes(&[("w".to_owned(), weights(vec![1.0, 2.0, 3.0]))]).unwrap();
        assert_eq!(metadata_from_bytes(&bytes).unwrap(), Metadata::new());
        let error = metadata_from_bytes(b"not a safetensors file").unwrap_err();
        assert!(matches!(error, Error::Backend { op: "load", .. }), "{error}");
    }
}

//! What the fixture models compute, and the inputs their reference scripts feed them, for
//! tests that check outputs against a formula or a reference file.

/// `dynamic.onnx`'s `y`: `x @ W` for rows of 4 (`x` is `[N, 4]`, `W` the `[4, 3]` matrix
/// `0.0, 0.1, ..., 1.1` that `make_fixtures.py` writes), `[N, 3]` row by row.
pub fn dynamic_y(x: &[f32]) -> Vec<f32> {
    let rows = x.len() / 4;
    let mut y = vec![0.0; rows * 3];
    for r in 0..rows {
        for c in 0..3 {
            y[r * 3 + c] = (0..4)
                .map(|k| x[r * 4 + k] * (k * 3 + c) as f32 / 10.0)
                .sum();
        }
    }
    y
}

/// Page `k` of the PP-OCR detector's reference scripts (`ppocr_det_reference.py` draws page
/// 0, `ppocr_det_serve_reference.py` pages 0..): -1 ink strokes on a +1 background, shifted
/// down by 3k and right by 5k, `[3, h, w]` (the same plane in each channel).
pub fn ppocr_page(k: usize, h: usize, w: usize) -> Vec<f32> {
    let (dy, dx) = (3 * k, 5 * k);
    let mut plane = Vec::with_capacity(h * w);
    for r in 0..h {
        for c in 0..w {
            let (rs, cs) = (r + dy, c + dx);
            let ink =
                (10..24).contains(&(rs % 32)) && cs % 6 < 2 && cs % 23 < 18 && c >= 8 && c + 8 < w;
            plane.push(if ink { -1.0 } else { 1.0 });
        }
    }
    plane.repeat(3)
}

//! `canopy-cli models check`: one test call per configured model slot, through the host layer's
//! `check_models` (the same call the app's "Test connection" makes).

use std::process::ExitCode;

use canopy_host::connection::SlotCheck;

use crate::render;

/// Calls each configured slot once and prints a line each; exit 1 when any is not usable.
pub async fn check() -> Result<ExitCode, String> {
    let checks = crate::host()?
        .check_models()
        .await
        .map_err(|e| e.to_string())?;
    let mut all_ok = true;
    for check in checks {
        let (ok, line) = slot_line(check);
        all_ok &= ok;
        println!("{}", render::one_line(&line));
    }
    Ok(if all_ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// Whether the slot works, and the line that says so. The reported model id, the error and even the
/// configured ids come from outside (a server, a settings file): the caller escapes the line like
/// everything else printed.
fn slot_line(SlotCheck { slot, outcome }: SlotCheck) -> (bool, String) {
    let label = slot.as_str();
    match outcome {
        Err(e) => (false, format!("{label}: NOT USABLE — {e}")),
        Ok((info, ping)) => {
            let fallback = if info.fallback {
                " (light not configured: uses main)"
            } else {
                ""
            };
            let model = format!(
                "{} {} at {}",
                info.provider.as_str(),
                info.model_id,
                info.base_url
            );
            match ping.answer {
                Ok(reported) => (true, format!(
                    "{label}: OK — {model} answered in {} ms (reported model: {reported}){fallback}",
                    ping.latency_ms
                )),
                Err(e) => (false, format!("{label}: FAILED — {model}: {e}{fallback}")),
            }
        }
    }
}

import { effectiveFromOf } from '../lib/schedule.js';

const zone = Intl.DateTimeFormat().resolvedOptions().timeZone;

/**
 * "Takes effect at": when a publish or rollback from this page becomes the runnable version
 * (docs/api.md#scheduled-versions-as-of-runs-and-rollback). Empty: at once. The service refuses a
 * past instant; the page shows its error.
 */
export function ScheduleField({ value, onChange, disabled }: { value: string; onChange: (v: string) => void; disabled: boolean }) {
  const at = effectiveFromOf(value);
  return (
    <div className="schedule" data-testid="schedule">
      <label className="schedule-at">
        Takes effect at{' '}
        <input
          type="datetime-local"
          value={value}
          onChange={(e) => onChange(e.target.value)}
          disabled={disabled}
          data-testid="effective-from"
        />
      </label>
      {value && (
        <button type="button" onClick={() => onChange('')} disabled={disabled}>
          At once
        </button>
      )}
      <span className="hint">
        {at
          ? `Publishing or rolling back now schedules the version for ${new Date(at).toLocaleString()} (${zone}).`
          : `Empty: at once. Your time zone: ${zone}.`}{' '}
        With review on, set it before “Publish approved draft”.
      </span>
    </div>
  );
}

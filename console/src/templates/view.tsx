import { t } from '../i18n';
import { formatted } from '../inbox/format';
import { labelOf, type TemplateView } from './catalogue';

/** How each status and quality looks: approved and high are good, the stopped ones alarming. */
const STATUS_LOOK: Record<string, string> = {
  APPROVED: 'open',
  PENDING: 'waiting',
  IN_APPEAL: 'waiting',
  REJECTED: 'opted-out',
  PAUSED: 'opted-out',
  DISABLED: 'opted-out',
  LIMIT_EXCEEDED: 'opted-out',
};
const QUALITY_LOOK: Record<string, string> = { GREEN: 'open', YELLOW: 'waiting', RED: 'opted-out' };

export function StatusBadge({ status }: { status: string }) {
  return <span class={`badge ${STATUS_LOOK[status] ?? ''}`}>{labelOf('statuses', status)}</span>;
}

export function QualityBadge({ quality }: { quality: string | null }) {
  if (!quality) return <span class="muted">—</span>;
  return (
    <span class={`badge ${QUALITY_LOOK[quality] ?? ''}`}>{labelOf('qualities', quality)}</span>
  );
}

/** A template message as a phone shows it: header, body (with its formatting), footer, buttons. */
export function MessageBubble({ view, label }: { view: TemplateView; label: string }) {
  return (
    <div class="bubble" role="group" aria-label={label}>
      {view.header_media && (
        <p class="bubble-media muted">
          {t('templates.mediaHeader', { kind: t(`templates.media.${view.header_media}`) })}
        </p>
      )}
      {view.header && <p class="bubble-header">{formatted(view.header)}</p>}
      <p class="bubble-body">{formatted(view.body)}</p>
      {view.footer && <p class="bubble-footer muted">{view.footer}</p>}
      {view.buttons.length > 0 && (
        <ul class="bubble-buttons">
          {view.buttons.map((button, i) => (
            <li key={i}>
              <span>{button.text}</span>
              {(button.url ?? button.phone_number) && (
                <span class="muted block">{button.url ?? button.phone_number}</span>
              )}
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}

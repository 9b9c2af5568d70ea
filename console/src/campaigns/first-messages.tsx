import { api, must } from '../api/client';
import { useLoad } from '../admin/ui';
import { t } from '../i18n';
import { componentsFor, type Template, type TemplateView } from '../templates/catalogue';
import { MessageBubble } from '../templates/view';
import type { Mapping } from './mapping';

/** How many of the list's first rows are shown as the messages they become. */
const SHOWN = 3;

/** A row's parameters as the service reads them from the mapped columns. */
export function rowParameters(
  row: Record<string, string>,
  mapping: Mapping,
): Record<string, string> {
  return Object.fromEntries(
    Object.entries(mapping.parameters)
      .filter(([, column]) => column)
      .map(([key, column]) => [key, row[column] ?? '']),
  );
}

/** Who a row goes to: its number, or its user id where the number is empty. */
export const rowAddress = (row: Record<string, string>, mapping: Mapping): string =>
  (mapping.to && row[mapping.to]) || (mapping.recipient && row[mapping.recipient]) || '';

type Rendered = { to: string; view: TemplateView } | { to: string; error: string };

/**
 * The first rows of the list rendered as the customer will read them, each
 * through POST /templates/{id}/preview: what the service would refuse of a
 * row (a missing value) shows here before anything is sent.
 */
export function FirstMessages({
  template,
  instance,
  rows,
  mapping,
}: {
  template: Template;
  instance: string;
  rows: Array<Record<string, string>>;
  mapping: Mapping;
}) {
  const first = rows.slice(0, SHOWN);
  const { data, error } = useLoad(
    () =>
      Promise.all(
        first.map(async (row): Promise<Rendered> => {
          const to = rowAddress(row, mapping);
          try {
            const view = must(
              await api.POST('/templates/{id}/preview', {
                params: { path: { id: template.id } },
                body: {
                  instance_id: instance,
                  components: componentsFor(template, rowParameters(row, mapping)),
                },
              }),
            );
            return { to, view };
          } catch (failure) {
            return { to, error: (failure as Error).message };
          }
        }),
      ),
    [template.id, instance, JSON.stringify(first), JSON.stringify(mapping)],
  );
  if (error) return <p class="error">{t('errors.generic', { message: error })}</p>;
  if (!data) return <p class="muted">{t('conversation.loading')}</p>;
  return (
    <ol class="first-messages">
      {data.map((rendered, i) => {
        const label = t('campaigns.messageTo', {
          n: i + 1,
          to: rendered.to || t('campaigns.noAddress'),
        });
        return (
          <li key={i}>
            {'view' in rendered ? (
              <MessageBubble view={rendered.view} label={label} />
            ) : (
              <div class="bubble refused" role="group" aria-label={label}>
                <p class="error-text">{t('campaigns.rowRefused', { message: rendered.error })}</p>
              </div>
            )}
            <p class="muted">{label}</p>
          </li>
        );
      })}
    </ol>
  );
}

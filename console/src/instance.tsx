import { t } from './i18n';
import { contacts, instanceId, openConversation, waitingContacts } from './inbox/state';
import type { Session } from './session';

/**
 * The instance the inbox, the templates and the campaigns show: one choice
 * for all of them, kept for the tab (the one chosen before in this tab, else
 * the first the person may see).
 */
const CHOSEN = 'console.instance';

/** The instance shown, chosen now if none is (or the one chosen is no longer the person's). */
export function shownInstance(session: Session): string | null {
  const instances = session.instances;
  if (!instanceId.value || !instances.some((i) => i.id === instanceId.value)) {
    const stored = sessionStorage.getItem(CHOSEN);
    instanceId.value = instances.find((i) => i.id === stored)?.id ?? instances[0]?.id ?? null;
  }
  return instanceId.value;
}

/** Shows another instance: the inbox's list and conversation are of the one shown. */
export function chooseInstance(id: string): void {
  // The number shown already: nothing to change (emptying the list would leave it empty).
  if (id === instanceId.value) return;
  sessionStorage.setItem(CHOSEN, id);
  contacts.value = [];
  waitingContacts.value = [];
  void openConversation(null);
  instanceId.value = id;
}

/** The number switcher: a select of the person's instances, labelled "Number". */
export function InstancePicker({
  session,
  id = 'instance',
  hideLabel = false,
}: {
  session: Session;
  id?: string;
  hideLabel?: boolean;
}) {
  const shown = shownInstance(session);
  return (
    <span class="instance-picker">
      <label class={hideLabel ? 'visually-hidden' : undefined} for={id}>
        {t('header.instance')}
      </label>
      <select id={id} value={shown ?? ''} onChange={(e) => chooseInstance(e.currentTarget.value)}>
        {session.instances.map((instance) => (
          <option key={instance.id} value={instance.id}>
            {instance.name}
            {instance.display_phone_number ? ` · ${instance.display_phone_number}` : ''}
          </option>
        ))}
      </select>
    </span>
  );
}

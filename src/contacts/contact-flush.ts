/**
 * Arms a contact's flush: its messages waiting for a turn go to the agent
 * when due. ContactBuffer is the one; contacts/ names only this, as the
 * buffer reads turns and messages, which read contacts (see ContactsApiModule).
 */
export abstract class ContactFlush {
  abstract schedule(instanceId: string, contactId: string): Promise<void>;
}
